// Mail, as the outbox carries it to the mail worker (topic `mail`). The worker renders each template into a
// plain-text and an HTML body (services/workers/mail) and sends it over SMTP; `id` is stable per mail, so a
// relay's second publication of the same row is sent once.
export const MAIL_TEMPLATES = [
  'partner_invite',
  'magic_link',
  'notification',
  'payout_method_changed',
] as const;
export type MailTemplate = (typeof MAIL_TEMPLATES)[number];

/** What each template needs; links are absolute (built from PUBLIC_URL by the writer). */
export interface MailData {
  /** An advertiser invites a partner to a program: `url` is the invite_url. */
  partner_invite: { url: string; program_name: string; partner_name: string; workspace_name?: string };
  /**
   * A sign-in link for the partner portal (15 minutes, one use); with `program_name`, sent after an
   * application to that program, whose partner record following the link claims.
   */
  magic_link: { url: string; program_name?: string };
  /** A notification that is also mailed: its title and body, and where to read more. */
  notification: { title: string; body: string; url: string };
  /** The account's payout method changed: when, and the new one masked (`url`: the portal's page of it). */
  payout_method_changed: { url: string; changed_at: string; method: string };
}

export type MailMessage = {
  [T in MailTemplate]: {
    /** Stable per mail: the mail worker sends each id once. */
    id: string;
    to: string;
    template: T;
    data: MailData[T];
    /** The workspace the mail is on behalf of (its advertiser sees failures); null for none. */
    workspace_id: number | null;
    created_at: string;
  };
}[MailTemplate];
