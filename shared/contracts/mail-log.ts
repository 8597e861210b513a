// The mail log's statuses (0015_mail.sql), as the mail worker writes them and GET /api/advertiser/mail
// filters and shows them (docs/mail.md).
export const MAIL_STATUSES = ['queued', 'sending', 'sent', 'failed', 'skipped'] as const;
export type MailStatus = (typeof MAIL_STATUSES)[number];
