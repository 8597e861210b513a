// The TypeScript SDK as a user gets it: built (npm run sdk:build's code) into a package, packed, installed
// into an empty project with no registry, type-checked there as a user's code, and run on this project's
// Node, on the machine's older Node when there is one, and with no global Web Crypto (Node 18's case, where
// it falls back to node:crypto): a sale retried after a 503 with the same key, a webhook verified.
import t from 'tap';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Webhook } from 'standardwebhooks';
import { SDK_DIR, buildSdk } from '../../scripts/sdk-build.ts';
import { ROOT } from '../../scripts/lib/stack/stack.ts';

const exec = promisify(execFile);
const tmp = await mkdtemp(join(tmpdir(), 'svc-sdk-package-'));
t.teardown(() => rm(tmp, { recursive: true, force: true }));

const pkg = join(tmp, 'pkg');
await buildSdk(join(pkg, 'dist'));
await cp(join(SDK_DIR, 'package.json'), join(pkg, 'package.json'));
await cp(join(SDK_DIR, 'README.md'), join(pkg, 'README.md'));
const app = join(tmp, 'app');
await mkdir(app);

t.test('packs and installs into an empty project without a registry', async (t) => {
  const packed = await exec('npm', ['pack', '--pack-destination', tmp, '--silent'], { cwd: pkg });
  const tgz = join(tmp, packed.stdout.trim().split('\n').pop()!);
  t.ok(existsSync(tgz), tgz);
  await writeFile(join(app, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
  await exec('npm', ['install', '--offline', '--no-audit', '--no-fund', tgz], { cwd: app });
  t.same(
    await readdir(join(app, 'node_modules')),
    ['.package-lock.json', 'svc-affiliate-sdk'],
    'no dependencies',
  );
  const files = await readdir(join(app, 'node_modules', 'svc-affiliate-sdk', 'dist'));
  t.ok(files.includes('index.js') && files.includes('index.d.ts'));
});

t.test("type-checks as a user's code (strict, nodenext, no @types/node)", async (t) => {
  await writeFile(
    join(app, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        module: 'nodenext',
        moduleResolution: 'nodenext',
        target: 'es2022',
        lib: ['es2022', 'dom'],
        types: [],
        noEmit: true,
      },
      include: ['use.ts'],
    }),
  );
  await writeFile(
    join(app, 'use.ts'),
    `import { Svc, SvcError, verifyWebhook } from 'svc-affiliate-sdk';
import type { SaleResult, WebhookEvent } from 'svc-affiliate-sdk';
const svc = new Svc({ baseUrl: 'https://svc.example.com', token: 'aff_x' });
const { click_id } = await svc.track.click({ affiliate_url: 'https://shop.example/?aff=ada' });
await svc.track.lead({ click_id, customer_key: 'user_42' });
const sale: SaleResult = await svc.track.sale({ transaction_id: 'order_1', amount_cents: 4900, customer_key: 'user_42' });
const id: number | undefined = sale.duplicate ? undefined : sale.sale_id;
await svc.track.refund({ transaction_id: 'order_1', refund_amount_cents: 100 }, { idempotencyKey: 'r1' });
const programs = await svc.programs.list();
const slug: string | undefined = programs.data[0]?.slug;
const event: WebhookEvent = await verifyWebhook('{}', new Headers(), 'whsec_x');
// @ts-expect-error amount_cents is a number
await svc.track.sale({ transaction_id: 'order_2', amount_cents: '4900' });
// @ts-expect-error no such resource
svc.customers;
console.log(id, slug, event.type, SvcError);
`,
  );
  const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  const r = await exec(process.execPath, [tsc, '-p', app]).catch((e: { stdout: string; code: number }) => e);
  t.equal('code' in r ? r.code : 0, 0, 'tsc passes', { output: r.stdout });
});

const secret = `whsec_${Buffer.from('package test secret, 32 bytes..').toString('base64')}`;
const body = JSON.stringify({ type: 'payout.paid', timestamp: new Date().toISOString(), data: { id: 3 } });
const at = new Date();
const headers = {
  'webhook-id': 'msg_pkg',
  'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
  'webhook-signature': new Webhook(secret).sign('msg_pkg', at, body),
};

const script = `import { createServer } from 'node:http';
import { Svc, verifyWebhook } from 'svc-affiliate-sdk';
const keys = [];
const server = createServer((req, res) => {
  keys.push(req.headers['idempotency-key']);
  req.resume();
  req.on('end', () => {
    if (keys.length === 1) {
      res.writeHead(503, { 'retry-after': '0', 'content-type': 'application/json' });
      return res.end('{"error":"busy"}');
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"success":true,"sale_id":1,"commission_id":2,"message":"Sale recorded"}');
  });
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const svc = new Svc({ baseUrl: 'http://127.0.0.1:' + server.address().port, token: 'aff_x' });
const sale = await svc.track.sale({ transaction_id: 'o1', amount_cents: 1 });
server.close();
const event = await verifyWebhook(process.env.BODY, JSON.parse(process.env.HEADERS), process.env.SECRET);
let refused = null;
await verifyWebhook(process.env.BODY + ' ', JSON.parse(process.env.HEADERS), process.env.SECRET).catch((e) => (refused = e.message));
console.log(JSON.stringify({ node: process.version, crypto: typeof globalThis.crypto, sale, keys, event, refused }));
`;

const runtimes: [string, string, string[]][] = [
  [`this project's Node (${process.version})`, process.execPath, []],
];
if (existsSync('/usr/bin/node')) runtimes.push(["the machine's Node", '/usr/bin/node', []]);
runtimes.push([
  'no global Web Crypto (the Node 18 fallback)',
  process.execPath,
  ['--import', './no-crypto.mjs'],
]);

for (const [name, node, flags] of runtimes) {
  t.test(`runs on ${name}: a retried sale keeps its key, a webhook verifies`, async (t) => {
    await writeFile(join(app, 'run.mjs'), script);
    await writeFile(join(app, 'no-crypto.mjs'), 'delete globalThis.crypto;\n');
    const r = await exec(node, [...flags, 'run.mjs'], {
      cwd: app,
      env: { ...process.env, BODY: body, HEADERS: JSON.stringify(headers), SECRET: secret },
    });
    const out = JSON.parse(r.stdout.trim()) as {
      node: string;
      crypto: string;
      sale: unknown;
      keys: string[];
      event: unknown;
      refused: string | null;
    };
    t.comment(`${node}: ${out.node}`);
    t.same(out.sale, { success: true, sale_id: 1, commission_id: 2, message: 'Sale recorded' });
    t.equal(out.keys.length, 2);
    t.match(out.keys[0], /^[0-9a-f-]{36}$/);
    t.equal(out.keys[1], out.keys[0], 'the retry carried the same Idempotency-Key');
    t.same(out.event, JSON.parse(body));
    t.equal(out.refused, 'No matching signature found');
    if (flags.length > 0) t.equal(out.crypto, 'undefined', 'ran without the global');
  });
}
