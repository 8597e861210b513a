// A local HTTP proxy in front of the service that spoils the first request it is told to: answers it 503
// with Retry-After without passing it on (`503`), or passes it on, waits for the service's whole answer and
// then drops the client's connection without answering (`drop`: the request took effect, the caller never
// hears). Everything else is passed through. It records every request, so a test can check what each
// attempt of a client's retry carried.
import { createServer, request } from 'node:http';
import type { IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Teardown } from './stack.ts';

export interface ProxiedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** What the proxy did with it. */
  fate: 'passed' | '503' | 'dropped';
}

export interface FlakyProxy {
  url: string;
  seen: ProxiedRequest[];
}

export async function flakyProxy(
  t: Teardown,
  target: string,
  fault: '503' | 'drop',
  matches: (method: string, path: string) => boolean,
): Promise<FlakyProxy> {
  const upstream = new URL(target);
  const seen: ProxiedRequest[] = [];
  let spoiled = false;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (d: Buffer) => chunks.push(d));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const entry: ProxiedRequest = {
        method: req.method!,
        path: req.url!,
        headers: req.headers,
        body: body.toString(),
        fate: 'passed',
      };
      seen.push(entry);
      const spoil = !spoiled && matches(req.method!, req.url!);
      if (spoil) spoiled = true;
      if (spoil && fault === '503') {
        entry.fate = '503';
        res.writeHead(503, { 'content-type': 'application/json', 'retry-after': '1' });
        res.end(JSON.stringify({ error: 'Service unavailable (test proxy)' }));
        return;
      }
      const out = request(
        {
          host: upstream.hostname,
          port: upstream.port,
          method: req.method,
          path: req.url,
          headers: { ...req.headers, host: upstream.host },
        },
        (answer) => {
          const parts: Buffer[] = [];
          answer.on('data', (d: Buffer) => parts.push(d));
          answer.on('end', () => {
            if (spoil) {
              // The service answered (the sale is recorded); the caller's connection dies unanswered.
              entry.fate = 'dropped';
              req.socket.destroy();
              return;
            }
            res.writeHead(answer.statusCode!, answer.headers);
            res.end(Buffer.concat(parts));
          });
        },
      );
      out.on('error', () => req.socket.destroy());
      out.end(body);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => {
    server.closeAllConnections();
    return new Promise((r) => server.close(() => r(undefined)));
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}
