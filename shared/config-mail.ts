// The mail settings of shared/config.ts (SMTP_URL, MAIL_FROM, the retry schedule), validated with the rest of
// the configuration at boot. Only the mail worker uses them (docs/mail.md).
type Env = Record<string, string | undefined>;

export interface MailConfig {
  /**
   * SMTP_URL: `smtp://[user:pass@]host[:port]` or `smtps://…` (TLS from the first byte). null: no SMTP at
   * all, and the mail worker records each mail as `skipped` (npm start runs MailDev and sets it).
   */
  smtpUrl: string | null;
  /** MAIL_FROM: the From of every mail, `Name <address>` or an address. */
  mailFrom: string;
  /**
   * MAIL_RETRY_DELAYS: the wait after each failed attempt, in order (`1m,5m,15m,1h,3h,6h,12h`: 8 attempts
   * over about 22 hours); a mail failing once more than the list is long is `failed` (the dead end).
   */
  mailRetryDelaysMs: number[];
  /** MAIL_POLL_MS: how often the mail worker looks for mail due (new, or due for a retry). */
  mailPollMs: number;
  /** MAIL_SEND_TIMEOUT_MS: the longest one SMTP attempt may take; its lease on the mail is twice that. */
  mailSendTimeoutMs: number;
  /** MAIL_CONCURRENCY: mails one worker sends at once (and its SMTP connections). */
  mailConcurrency: number;
}

const UNITS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const MAX_DELAY_MS = 7 * 86_400_000;

/** `500ms`, `30s`, `5m`, `1h`, `2d` (or bare milliseconds) → milliseconds; null when not one of those. */
export function parseDuration(text: string): number | null {
  const m = /^(\d{1,9})(ms|s|m|h|d)?$/.exec(text.trim());
  if (!m) return null;
  return Number(m[1]) * UNITS[m[2] ?? 'ms']!;
}

/** The default From: `svc <no-reply@…>` on PUBLIC_URL's host name when it is a domain, else localhost. */
function defaultFrom(publicUrl: string | undefined): string {
  let host = 'localhost';
  try {
    const h = new URL(publicUrl ?? '').hostname;
    if (/^[a-z0-9-]+(\.[a-z0-9-]+)+$/i.test(h) && /[a-z]/i.test(h)) host = h;
  } catch {
    // no PUBLIC_URL, or not a URL (reported by loadConfig): the local default
  }
  return `svc <no-reply@${host}>`;
}

export function loadMailConfig(env: Env, problems: string[]): MailConfig {
  const raw = (name: string) => (env[name] === undefined || env[name] === '' ? undefined : env[name]);

  const smtpUrl = raw('SMTP_URL') ?? null;
  if (smtpUrl !== null) {
    let ok = false;
    try {
      const u = new URL(smtpUrl);
      ok = (u.protocol === 'smtp:' || u.protocol === 'smtps:') && u.hostname !== '';
    } catch {
      ok = false;
    }
    if (!ok) problems.push('SMTP_URL must be smtp://[user:pass@]host[:port] or smtps://…');
  }

  const mailFrom = raw('MAIL_FROM') ?? defaultFrom(raw('PUBLIC_URL'));
  if (/[\r\n]/.test(mailFrom) || !/^[^@\s<>]+@[^@\s<>]+$|<[^@\s<>]+@[^@\s<>]+>\s*$/.test(mailFrom.trim())) {
    problems.push('MAIL_FROM must be an address (no-reply@example.com) or "Name <no-reply@example.com>"');
  }

  const delaysText = raw('MAIL_RETRY_DELAYS') ?? '1m,5m,15m,1h,3h,6h,12h';
  const mailRetryDelaysMs = delaysText.split(',').map(parseDuration);
  if (
    mailRetryDelaysMs.length > 50 ||
    mailRetryDelaysMs.some((d) => d === null || d < 100 || d > MAX_DELAY_MS)
  ) {
    problems.push(
      `MAIL_RETRY_DELAYS must list up to 50 waits between 100ms and 7d, like 1m,5m,1h (got "${delaysText}")`,
    );
  }

  const int = (name: string, dflt: number, min: number, max: number): number => {
    const text = raw(name);
    if (text === undefined) return dflt;
    const n = Number(text);
    if (!Number.isInteger(n) || n < min || n > max) {
      problems.push(`${name} must be an integer between ${min} and ${max} (got "${text}")`);
      return dflt;
    }
    return n;
  };

  return {
    smtpUrl,
    mailFrom: mailFrom.trim(),
    mailRetryDelaysMs: mailRetryDelaysMs.map((d) => d ?? 60_000),
    mailPollMs: int('MAIL_POLL_MS', 1_000, 10, 60_000),
    mailSendTimeoutMs: int('MAIL_SEND_TIMEOUT_MS', 30_000, 1_000, 600_000),
    mailConcurrency: int('MAIL_CONCURRENCY', 5, 1, 100),
  };
}
