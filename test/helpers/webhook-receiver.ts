// A webhook receiver for the tests: an HTTPS server (a self-signed certificate made here with openssl for the
// name `hooks.test`, trusted by the worker through NODE_EXTRA_CA_CERTS, the name pinned to 127.0.0.1 with
// WEBHOOK_RESOLVE) or plain HTTP. Every request is kept with its headers, its raw body and when it came;
// `verify` checks a delivery with the npm `standardwebhooks` library, not the project's own code. What it
// answers is up to `respond` (default 204); a response is counted as acknowledged only when the 2xx was
// written to a connection that was still open (a worker killed while the receiver held the request does not
// acknowledge it).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { Webhook } from 'standardwebhooks';
import type { Teardown } from './stack.ts';

export const HOOKS_HOST = 'hooks.test';

export interface Received {
  at: number;
  path: string;
  headers: Record<string, string>;
  body: string;
  /** The status answered (0 while held or when the connection closed first). */
  status: number;
  /** A 2xx written to an open connection. */
  acknowledged: boolean;
}

export type Responder = (
  r: Received,
) =>
  | number
  | { status: number; headers?: Record<string, string>; body?: string; delayMs?: number }
  | 'hang'
  | 'drop';

export interface Receiver {
  /** https://hooks.test:<port> or http://127.0.0.1:<port>. */
  url: string;
  port: number;
  received: Received[];
  respond: Responder;
  /** The PEM file of the self-signed certificate (NODE_EXTRA_CA_CERTS), when HTTPS. */
  caFile: string | null;
  /** Stops listening (connections refused), and starts again on the same port. */
  down(): Promise<void>;
  up(): Promise<void>;
  close(): Promise<void>;
}

/** A self-signed certificate for HOOKS_HOST: [key, cert, dir]. */
export function selfSigned(): { key: string; cert: string; certFile: string; dir: string } {
  const dir = mkdtempSync(join(tmpdir(), 'svc-hooks-'));
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '2',
      '-keyout',
      join(dir, 'key.pem'),
      '-out',
      join(dir, 'cert.pem'),
      '-subj',
      `/CN=${HOOKS_HOST}`,
      '-addext',
      `subjectAltName=DNS:${HOOKS_HOST}`,
    ],
    { stdio: 'ignore' },
  );
  return {
    key: readFileSync(join(dir, 'key.pem'), 'utf8'),
    cert: readFileSync(join(dir, 'cert.pem'), 'utf8'),
    certFile: join(dir, 'cert.pem'),
    dir,
  };
}

export async function startReceiver(t: Teardown, opts: { https?: boolean } = {}): Promise<Receiver> {
  const tls = opts.https === false ? null : selfSigned();
  const received: Received[] = [];
  const handler = (req: http.IncomingMessage, res: http.ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const r: Received = {
        at: Date.now(),
        path: req.url ?? '/',
        headers: Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)])),
        body: Buffer.concat(chunks).toString('utf8'),
        status: 0,
        acknowledged: false,
      };
      received.push(r);
      const answer = receiver.respond(r);
      if (answer === 'hang') return;
      if (answer === 'drop') return void req.socket.destroy();
      const a = typeof answer === 'number' ? { status: answer } : answer;
      const reply = () => {
        if (req.socket.destroyed || res.destroyed) return;
        r.status = a.status;
        res.writeHead(a.status, a.headers ?? {});
        res.end(a.body ?? '', () => {
          r.acknowledged = a.status >= 200 && a.status < 300 && !req.socket.destroyed;
        });
      };
      if (a.delayMs) setTimeout(reply, a.delayMs);
      else reply();
    });
  };
  const server = tls
    ? https.createServer({ key: tls.key, cert: tls.cert }, handler)
    : http.createServer(handler);
  const sockets = new Set<Socket>();
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  const receiver: Receiver = {
    url: tls ? `https://${HOOKS_HOST}:${port}` : `http://127.0.0.1:${port}`,
    port,
    received,
    respond: () => 204,
    caFile: tls?.certFile ?? null,
    async down() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
    async up() {
      await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
      if (tls) rmSync(tls.dir, { recursive: true, force: true });
    },
  };
  t.teardown(() => receiver.close().catch(() => {}));
  return receiver;
}

/** Verifies a received delivery with the `standardwebhooks` library; returns the parsed body. */
export function verify(
  secret: string,
  r: Received,
): { type: string; timestamp: string; data: Record<string, unknown> } {
  return new Webhook(secret).verify(r.body, {
    'webhook-id': r.headers['webhook-id'] ?? '',
    'webhook-timestamp': r.headers['webhook-timestamp'] ?? '',
    'webhook-signature': r.headers['webhook-signature'] ?? '',
  }) as { type: string; timestamp: string; data: Record<string, unknown> };
}
