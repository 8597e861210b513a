// Parse step of the mail worker: a message of the `mail` topic as a MailMessage, or the reason it is poison
// (dead-lettered: retrying it would never help). The writers are our own (shared/db/mail.ts), so a message
// failing here is a bug or a foreign producer; the checks keep what reaches SMTP and the mail log sane:
// one recipient address without line breaks, absolute http(s) links, strings that Postgres can store.
import { MAIL_TEMPLATES } from '../../../shared/contracts/mail.ts';
import type { MailMessage } from '../../../shared/contracts/mail.ts';
import { decodeMessageObject, isPlainObject } from '../../../shared/json.ts';

/** One address, as the API accepts them: no spaces, no line breaks, no display name. */
const ADDRESS_RE = /^[^\s@<>,;"]+@[^\s@<>,;"]+\.[^\s@<>,;"]+$/;

const str = (v: unknown, max: number): v is string =>
  typeof v === 'string' && v.length > 0 && v.length <= max;

function absoluteUrl(v: unknown): boolean {
  if (!str(v, 2000) || /\s/.test(v)) return false;
  try {
    const u = new URL(v);
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname !== '';
  } catch {
    return false;
  }
}

/** Why `data` does not fit the template, or null. */
function dataProblem(template: MailMessage['template'], d: Record<string, unknown>): string | null {
  if (!absoluteUrl(d.url)) return 'data.url must be an absolute http(s) URL';
  switch (template) {
    case 'partner_invite':
      if (!str(d.program_name, 500)) return 'bad data.program_name';
      if (!str(d.partner_name, 500)) return 'bad data.partner_name';
      if (!(d.workspace_name === undefined || d.workspace_name === null || str(d.workspace_name, 500)))
        return 'bad data.workspace_name';
      return null;
    case 'magic_link':
      if (!(d.program_name === undefined || str(d.program_name, 500))) return 'bad data.program_name';
      return null;
    case 'payout_method_changed':
      if (!str(d.changed_at, 100)) return 'bad data.changed_at';
      if (!str(d.method, 500)) return 'bad data.method';
      return null;
    case 'notification':
      if (!str(d.title, 1000)) return 'bad data.title';
      if (!str(d.body, 20_000)) return 'bad data.body';
      return null;
  }
}

/** The message, or why it is poison. */
export function parseMailMessage(bytes: Buffer | null): MailMessage | string {
  const m = decodeMessageObject(bytes);
  if (typeof m === 'string') return m;
  if (!str(m.id, 300)) return 'bad id';
  if (!str(m.to, 320) || !ADDRESS_RE.test(m.to)) return 'bad to';
  if (!MAIL_TEMPLATES.includes(m.template as MailMessage['template'])) {
    return `unknown template ${String(m.template)}`;
  }
  if (!isPlainObject(m.data)) return 'bad data';
  const problem = dataProblem(m.template as MailMessage['template'], m.data);
  if (problem) return problem;
  const ws = m.workspace_id;
  if (!(ws === null || ws === undefined || (typeof ws === 'number' && Number.isSafeInteger(ws) && ws > 0))) {
    return 'bad workspace_id';
  }
  return { ...m, workspace_id: ws ?? null } as unknown as MailMessage;
}
