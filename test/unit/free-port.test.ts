// freePort (scripts/lib/stack/stack.ts) hands out ports below the kernel's ephemeral range: a port from that range
// can become the local end of another process's outgoing connection before our server listens on it, and
// the server then fails with EADDRINUSE for as long as that connection lives (a chaos run's worker exited
// at every restart). Shown here: an outgoing connection does hold its local port against a listener, and
// freePort's ports are outside the range, distinct, and bindable.
import t from 'tap';
import { readFile } from 'node:fs/promises';
import { createServer, connect } from 'node:net';
import type { Server } from 'node:net';
import { freePort } from '../../scripts/lib/stack/stack.ts';

const listen = (srv: Server, port: number) =>
  new Promise<string | null>((res) => {
    srv.once('error', (e: NodeJS.ErrnoException) => res(e.code ?? 'error'));
    srv.listen(port, '127.0.0.1', () => res(null));
  });
const close = (srv: Server) => new Promise<void>((res) => srv.close(() => res()));

const range = await readFile('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').then(
  (s) => s.trim().split(/\s+/).map(Number),
  () => null,
);

t.test('an outgoing connection holds its local port against a listener', async (t) => {
  const target = createServer((s) => s.on('error', () => {}));
  t.equal(await listen(target, 0), null);
  const port = (target.address() as { port: number }).port;
  const client = connect({ port, host: '127.0.0.1' });
  await new Promise<void>((res) => client.once('connect', () => res()));
  const other = createServer();
  t.equal(await listen(other, client.localPort!), 'EADDRINUSE', 'the ephemeral port is taken');
  client.destroy();
  await close(target);
});

t.test(
  'freePort: below the ephemeral range, distinct, free',
  { skip: range === null && 'no /proc' },
  async (t) => {
    const ports: number[] = [];
    for (let i = 0; i < 50; i++) ports.push(await freePort());
    t.equal(new Set(ports).size, ports.length, 'never the same port twice');
    t.ok(
      ports.every((p) => p >= 1024 && p < range![0]!),
      `all below ${range![0]}: ${ports.slice(0, 5).join(', ')}…`,
    );
    for (const p of ports.slice(0, 5)) {
      const srv = createServer();
      t.equal(await listen(srv, p), null, `${p} can be listened on`);
      await close(srv);
    }
  },
);
