// A real SMTP receiver for tests (npm smtp-server): mail the services send arrives here, parsed.
//
//   const sink = await startSmtpSink(t);                  // 127.0.0.1, a free port; closed at t's teardown
//   const svc = await startServices(t, ['web', 'outbox-relay', 'mail-worker'], { SMTP_URL: sink.url });
//   const mail = await sink.waitForMail((m) => m.to.includes('ada@example.com'));
//   mail.subject; mail.text; mail.html; mail.links  // the http(s) links of the text body
//   sink.refuse(2);                                   // the next 2 mails are answered 550 (Infinity: all)
//   sink.holdAfter(60); await sink.waitForHeld();     // accept 60 more, then leave mails unanswered
//   sink.release();                                   // answer (accept) the held mails, stop holding
//
// `messages` holds every accepted mail in arrival order; `refused` counts the refused ones.
import { SMTPServer } from 'smtp-server';
import { simpleParser } from 'mailparser';
import type { AddressObject } from 'mailparser';
import { freePort } from '../../scripts/lib/stack/stack.ts';
import type { Teardown } from './stack.ts';

export interface SinkMail {
  /** Envelope sender and recipients (lower case), as the SMTP client gave them. */
  from: string;
  to: string[];
  subject: string;
  text: string;
  html: string;
  /** Header names in lower case: `message-id`, `x-svc-mail-id`, … */
  headers: Record<string, string>;
  /** The absolute http(s) links of the plain-text body, in order. */
  links: string[];
  raw: string;
}

export interface SmtpSink {
  /** `smtp://127.0.0.1:<port>`, for SMTP_URL. */
  url: string;
  port: number;
  messages: SinkMail[];
  /** How many mails were refused. */
  refused: number;
  /** Answers the next `count` mails 550 (after reading them); Infinity refuses all, 0 stops refusing. */
  refuse(count: number): void;
  /**
   * Accepts `count` more mails, then reads each further one and leaves it unanswered (not accepted, not in
   * `messages`): its sender waits for the server's answer. A crash test's "killed mid-backlog" by
   * construction, whatever the machine's speed. A held mail whose connection closes (its sender killed) was
   * never accepted and is dropped.
   */
  holdAfter(count: number): void;
  /** Accepts the held mails whose senders are still connected, and stops holding. */
  release(): void;
  /** Mails held now. */
  readonly held: number;
  /** Resolves once at least one mail is held; rejects after `timeoutMs`. */
  waitForHeld(timeoutMs?: number): Promise<void>;
  /** The first mail (already received or still to come) that `pred` accepts; rejects after `timeoutMs`. */
  waitForMail(pred?: (m: SinkMail) => boolean, timeoutMs?: number): Promise<SinkMail>;
  close(): Promise<void>;
}

const addresses = (a: AddressObject | AddressObject[] | undefined): string[] =>
  (Array.isArray(a) ? a : a ? [a] : []).flatMap((x) => x.value.map((v) => (v.address ?? '').toLowerCase()));

export async function startSmtpSink(t: Teardown): Promise<SmtpSink> {
  const port = await freePort();
  const waiters: { pred: (m: SinkMail) => boolean; resolve: (m: SinkMail) => void }[] = [];
  let refuseNext = 0;
  /** Mails still to accept before holding (Infinity: not holding). */
  let acceptBeforeHold = Infinity;
  const held: { sessionId: string; accept: () => void }[] = [];
  const heldWaiters: (() => void)[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    logger: false,
    // Pooled client connections (the mail worker's) must not hold the teardown up.
    closeTimeout: 2_000,
    onClose(session) {
      for (let i = held.length - 1; i >= 0; i--) if (held[i]!.sessionId === session.id) held.splice(i, 1);
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        if (refuseNext > 0) {
          refuseNext--;
          sink.refused++;
          const err = Object.assign(new Error('Mailbox unavailable (test sink refusing)'), {
            responseCode: 550,
          });
          callback(err);
          return;
        }
        const raw = Buffer.concat(chunks);
        const envelopeFrom = session.envelope.mailFrom;
        const accept = () =>
          simpleParser(raw).then(
            (parsed) => {
              const headers: Record<string, string> = {};
              for (const line of parsed.headerLines) {
                headers[line.key] = line.line.slice(line.line.indexOf(':') + 1).trim();
              }
              const text = parsed.text ?? '';
              const mail: SinkMail = {
                from: envelopeFrom ? envelopeFrom.address.toLowerCase() : '',
                to: session.envelope.rcptTo.map((r) => r.address.toLowerCase()),
                subject: parsed.subject ?? '',
                text,
                html: typeof parsed.html === 'string' ? parsed.html : '',
                headers,
                links: text.match(/https?:\/\/[^\s<>"]+/g) ?? [],
                raw: raw.toString('utf8'),
              };
              if (mail.to.length === 0) mail.to = addresses(parsed.to);
              sink.messages.push(mail);
              for (let i = waiters.length - 1; i >= 0; i--) {
                if (waiters[i]!.pred(mail)) {
                  waiters[i]!.resolve(mail);
                  waiters.splice(i, 1);
                }
              }
              callback();
            },
            (err: Error) => callback(err),
          );
        if (acceptBeforeHold === 0) {
          held.push({ sessionId: session.id, accept: () => void accept() });
          heldWaiters.splice(0).forEach((w) => w());
          return;
        }
        acceptBeforeHold--;
        void accept();
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  // A client that goes away mid-session (a worker killed with -9) is not the test's failure.
  server.on('error', () => {});
  let closed = false;
  const sink: SmtpSink = {
    url: `smtp://127.0.0.1:${port}`,
    port,
    messages: [],
    refused: 0,
    refuse(count) {
      refuseNext = count;
    },
    holdAfter(count) {
      acceptBeforeHold = count;
    },
    release() {
      acceptBeforeHold = Infinity;
      held.splice(0).forEach((h) => h.accept());
    },
    get held() {
      return held.length;
    },
    waitForHeld(timeoutMs = 120_000) {
      if (held.length > 0) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`no mail held within ${timeoutMs} ms (${sink.messages.length} accepted)`)),
          timeoutMs,
        );
        heldWaiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    },
    waitForMail(pred = () => true, timeoutMs = 60_000) {
      const found = sink.messages.find(pred);
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          const i = waiters.indexOf(waiter);
          if (i >= 0) waiters.splice(i, 1);
          reject(new Error(`no matching mail within ${timeoutMs} ms (${sink.messages.length} received)`));
        }, timeoutMs);
        const waiter = {
          pred,
          resolve: (m: SinkMail) => {
            clearTimeout(timer);
            resolve(m);
          },
        };
        waiters.push(waiter);
      });
    },
    close() {
      if (closed) return Promise.resolve();
      closed = true;
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  t.teardown(() => sink.close());
  return sink;
}
