// Queuing mail: an outbox row per mail, in the caller's transaction (shared/db/outbox.ts). Nothing here
// waits for SMTP; the mail worker sends after the commit.
import type { Sql, Tx } from './sql.ts';
import { outboxTopic, writeOutbox } from './outbox.ts';
import type { MailData, MailMessage, MailTemplate } from '../contracts/mail.ts';

export interface MailInput<T extends MailTemplate = MailTemplate> {
  /** Stable per mail (e.g. `invite:<inviteId>`): a republished row is sent once. */
  id: string;
  to: string;
  template: T;
  data: MailData[T];
  workspace_id: number | null;
}

/** Writes the mails to the outbox of `kafkaPrefix`'s deployment, in `tx`. */
export async function queueMail(
  tx: Tx | Sql,
  kafkaPrefix: string,
  mails: readonly MailInput[],
): Promise<void> {
  const now = new Date().toISOString();
  await writeOutbox(
    tx,
    mails.map((m) => ({
      topic: outboxTopic(kafkaPrefix, 'mail'),
      key: m.to.toLowerCase(),
      payload: { ...m, created_at: now } as MailMessage,
    })),
  );
}
