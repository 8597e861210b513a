#!/usr/bin/env node
// svc: the command-line client of the management API and of test events. It talks HTTP to one base URL
// with a dashboard session (`svc login`) or a management key (--token affk_… / SVC_TOKEN); --json prints
// the API's JSON as is. Run it with `npx svc …` (npm puts the project's Node 24 first on PATH).
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { integerIn } from '../scripts/lib/cli.ts';

const HELP = `svc: manage affiliate programs and send test events

Usage: svc <command> [arguments] [options]

Session
  login --email <e> [--password <p>]     log in and remember the session (password: prompt or $SVC_PASSWORD)
  logout                                 end the remembered session
  signup --email <e> [--password <p>] [--name <n>] [--workspace <w>]

Programs
  programs list
  programs get <id>
  programs create --name <n> [--slug s] [--cookie-days n] [--currency c] [--percent p | --flat-cents n] [--origins a,b]
  programs update <id> [--name n] [--slug s] [--cookie-days n] [--currency c] [--percent p | --flat-cents n] [--origins a,b]
      both also take [--hold-days n] [--min-payout-cents n]   (payouts, docs/payouts.md)
  programs delete <id>
  programs go-live <id>
  programs regenerate-token <id>
Partners, links, commissions
  partners list <programId>
  partners add <programId> --name <n> --email <e> [--status approved|pending]   (prints the invite_url once)
  partners approve <programId> <partnerId>              (creates a link if it has none)
  partners reject <programId> <partnerId> [--reason r]
  partners invite <programId> <partnerId>               (a new invite_url; the older one stops working)
  links list <programId> <partnerId>
  links create <programId> <partnerId> [--short-link s]
  links set <programId> <partnerId> <linkId> active|inactive
  commissions list <programId> [--status s]            (s: pending|approved|paid|reversed|refunded|review)
  commissions mark-paid <commissionId>
  commissions approve <commissionId>                   (clears a review hold)
  commissions reject <commissionId> [--reason r]       (reverses it through the ledger)
Payouts (docs/payouts.md)
  payouts preview <programId> [--partner id]           what creating payouts now would pay; writes nothing
  payouts create <programId> [--partner id,...]        one payout per partner with payable commissions
  payouts list <programId> [--status pending|paid|canceled] [--limit n] [--offset n]
  payouts show <payoutId>
  payouts export <programId> --format csv|paypal|wise [--status s] [--out file]
                                                       the program's payouts (default: pending) as a file
  payouts mark-paid <payoutId> [--reference r]         its commissions paid, the partner notified
  payouts cancel <payoutId>                            its commissions payable again
Workspace
  members list | members add --email <e> --role <r> | members remove <userId>
  keys list | keys create --name <n> [--scopes a,b] [--programs 1,2] [--expires <ISO>]
  keys update <id> [--name n] [--scopes a,b] [--programs 1,2|all] | keys revoke <id>
  processor connect --status <s> [--account <id>] [--charges] [--payouts] [--details]
  processor roll-secret
  processor events <programId> [--outcome o] [--page n] [--page-size n]
Webhooks (outbound events, docs/webhooks.md)
  webhooks list
  webhooks add <url> [--events a,b] [--programs 1,2] [--description d]   (the secret is shown once)
  webhooks test <endpointId>             send a webhook.test event to the endpoint
  webhooks deliveries <endpointId> [--status pending|delivered|failed] [--page n] [--page-size n]
  webhooks retry <deliveryId>            attempt a delivery again now
  webhooks rotate|enable|disable|delete <endpointId>
Notifications (the dashboard's bell)
  notifications [--unread] [--page n] [--page-size n]
  notifications read <id> | notifications read-all
Dashboard
  status <programId>
  events <programId> [--type click|lead|conversion] [--page n] [--page-size n] [--from ISO] [--to ISO]
  performance <programId> [--period 7d|30d|90d|all] [--from ISO --to ISO]
Test events (tracking endpoints, test mode: nothing real is touched)
  test click <programId> [--aff code]
  test lead <programId> [--customer-key k]
  test sale <programId> [--amount-cents n]

Options
  --url <base>      service base URL (default $SVC_URL or http://127.0.0.1:8080)
  --token <t>       sess_… or affk_… (default $SVC_TOKEN, then the remembered session)
  --workspace-id n  the workspace for workspace-level commands (default: your first)
  --json            print the API's JSON response
  -h, --help        this text`;

const { values: o, positionals } = parseArgs({
  allowPositionals: true,
  strict: true,
  options: {
    url: { type: 'string' },
    token: { type: 'string' },
    json: { type: 'boolean' },
    help: { type: 'boolean', short: 'h' },
    email: { type: 'string' },
    password: { type: 'string' },
    name: { type: 'string' },
    workspace: { type: 'string' },
    'workspace-id': { type: 'string' },
    slug: { type: 'string' },
    'cookie-days': { type: 'string' },
    currency: { type: 'string' },
    percent: { type: 'string' },
    'flat-cents': { type: 'string' },
    origins: { type: 'string' },
    status: { type: 'string' },
    'short-link': { type: 'string' },
    role: { type: 'string' },
    scopes: { type: 'string' },
    programs: { type: 'string' },
    expires: { type: 'string' },
    account: { type: 'string' },
    charges: { type: 'boolean' },
    payouts: { type: 'boolean' },
    details: { type: 'boolean' },
    type: { type: 'string' },
    page: { type: 'string' },
    'page-size': { type: 'string' },
    from: { type: 'string' },
    to: { type: 'string' },
    period: { type: 'string' },
    aff: { type: 'string' },
    'customer-key': { type: 'string' },
    'amount-cents': { type: 'string' },
    outcome: { type: 'string' },
    events: { type: 'string' },
    description: { type: 'string' },
    reason: { type: 'string' },
    unread: { type: 'boolean' },
    'hold-days': { type: 'string' },
    'min-payout-cents': { type: 'string' },
    partner: { type: 'string' },
    limit: { type: 'string' },
    offset: { type: 'string' },
    format: { type: 'string' },
    out: { type: 'string' },
    reference: { type: 'string' },
  },
});

const CREDENTIALS = join(
  process.env.XDG_CONFIG_HOME ?? join(homedir(), '.config'),
  'svc',
  'credentials.json',
);
const base = (o.url ?? process.env.SVC_URL ?? 'http://127.0.0.1:8080').replace(/\/+$/, '');

class CliError extends Error {}

async function token(): Promise<string> {
  if (o.token) return o.token;
  if (process.env.SVC_TOKEN) return process.env.SVC_TOKEN;
  const saved = await readFile(CREDENTIALS, 'utf8').then(
    (t) => JSON.parse(t) as Record<string, string>,
    () => ({}) as Record<string, string>,
  );
  const t = saved[base];
  if (!t) throw new CliError(`not logged in to ${base}: run \`svc login --email …\` or pass --token`);
  return t;
}

async function api(method: string, path: string, body?: unknown, auth = true): Promise<unknown> {
  const { text } = await request(method, path, body, auth);
  return text ? (JSON.parse(text) as unknown) : null;
}

/** One HTTP call; an answer other than 2xx is a CliError with the API's `error` string. */
async function request(
  method: string,
  path: string,
  body?: unknown,
  auth = true,
): Promise<{ res: Response; text: string }> {
  const headers: Record<string, string> = {};
  if (auth) headers.authorization = `Bearer ${await token()}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  let res: Response;
  try {
    res = await fetch(base + path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (err) {
    throw new CliError(`cannot reach ${base}: ${(err as Error).message}`);
  }
  const text = await res.text();
  if (!res.ok) {
    let e = text;
    try {
      e = (JSON.parse(text) as { error?: string } | null)?.error ?? text;
    } catch {
      // not JSON: the text as is
    }
    throw new CliError(`${method} ${path}: ${res.status} ${e}`);
  }
  return { res, text };
}

const q = (params: Record<string, string | undefined>) => {
  const s = new URLSearchParams(
    Object.entries(params).filter((e): e is [string, string] => e[1] !== undefined),
  ).toString();
  return s ? `?${s}` : '';
};
const ws = () => q({ workspace_id: o['workspace-id'] });
const int = (v: string | undefined, what: string): number => {
  const n = integerIn(v, -Infinity, Infinity);
  if (n === null) throw new CliError(`${what} must be an integer`);
  return n;
};
const arg = (i: number, what: string): string => {
  const v = positionals[i];
  if (v === undefined) throw new CliError(`missing ${what}; see svc --help`);
  return v;
};
const list = (v: string | undefined) =>
  v === undefined
    ? undefined
    : v
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);

const programPath = (suffix = '') => `/api/advertiser/affiliate-programs/${arg(2, 'program id')}${suffix}`;
const linksPath = (suffix = '') => programPath(`/partners/${arg(3, 'partner id')}/links${suffix}`);
const LINK_COLS = ['id', 'short_link', 'status', 'clicks', 'last_clicked'];
const webhookPath = () => `/api/advertiser/webhooks/${arg(2, 'endpoint id')}`;
const WEBHOOK_COLS = ['id', 'url', 'events', 'program_ids', 'status', 'disabled_reason', 'description'];
const payoutPath = (suffix = '') => `/api/advertiser/payouts/${arg(2, 'payout id')}${suffix}`;
const PAYOUT_COLS = [
  'id',
  'partner_id',
  'partner_name',
  'status',
  'amount_cents',
  'currency',
  'commissions_cents',
  'recovered_cents',
  'method',
  'reference',
  'created_at',
  'paid_at',
];
const COMMISSION_COLS = [
  'id',
  'status',
  'amount_cents',
  'deducted_cents',
  'currency',
  'sale_id',
  'partner_id',
  'review_reason',
  'payable_at',
  'payout_id',
  'refund_reason',
  'created_at',
];

/** Payouts (or preview rows) with a `method` column: the payout method's type, `none` without one. */
function withMethod(result: unknown): unknown {
  if (o.json) return result;
  const r = result as { data: unknown };
  const add = (p: Record<string, unknown>) => ({
    ...p,
    method: (p.payout_method as { type?: string } | null)?.type ?? 'none',
  });
  return {
    ...r,
    data: Array.isArray(r.data) ? r.data.map(add) : add(r.data as Record<string, unknown>),
  };
}

/** `svc payouts export`: the CSV file as the API made it, to --out or stdout. */
async function exportPayouts(): Promise<void> {
  if (!o.format) throw new CliError('missing --format csv|paypal|wise; see svc --help');
  const { res, text } = await request(
    'GET',
    programPath(`/payouts/export${q({ format: o.format, status: o.status })}`),
  );
  const leftOut = Number(res.headers.get('x-payouts-left-out') ?? 0);
  // PayPal and Wise files leave out payouts of 0 and partners without a method of that kind: say so on
  // stderr, so that stdout stays the file itself.
  const note =
    leftOut > 0
      ? `${leftOut} payout(s) left out of the ${o.format} file: no ${o.format} payout method, or nothing to send\n`
      : '';
  if (o.out) {
    await writeFile(o.out, text);
    process.stdout.write(`wrote ${o.out}\n`);
  } else {
    process.stdout.write(text);
  }
  process.stderr.write(note);
}

/** A tracking call in test mode for the program of the third argument: no token, nothing real touched. */
async function testEvent(kind: 'click' | 'lead' | 'sale', fields: Record<string, unknown>): Promise<void> {
  const body = {
    ...fields,
    additional_data: { test_mode: true, program_id: int(arg(2, 'program id'), 'program id') },
  };
  return show(await api('POST', `/api/v1/track/${kind}`, body, false));
}

function programFields(): Record<string, unknown> {
  const f: Record<string, unknown> = {};
  if (o.name) f.name = o.name;
  if (o.slug) f.slug = o.slug;
  if (o['cookie-days']) f.cookie_window_days = int(o['cookie-days'], '--cookie-days');
  if (o.currency) f.currency = o.currency;
  if (o.percent) f.commission = { type: 'percentage', percent: Number(o.percent) };
  if (o['flat-cents']) f.commission = { type: 'flat', amount_cents: int(o['flat-cents'], '--flat-cents') };
  if (o.origins) f.allowed_origins = list(o.origins);
  if (o['hold-days']) f.hold_days = int(o['hold-days'], '--hold-days');
  if (o['min-payout-cents']) f.min_payout_cents = int(o['min-payout-cents'], '--min-payout-cents');
  return f;
}

/** Plain-text table of rows (objects), with the given columns. */
function table(rows: Record<string, unknown>[], cols: string[]): string {
  const cell = (v: unknown) =>
    v === null || v === undefined ? '-' : typeof v === 'object' ? JSON.stringify(v) : String(v);
  const widths = cols.map((c) => Math.max(c.length, ...rows.map((r) => cell(r[c]).length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  return [
    line(cols),
    line(widths.map((w) => '-'.repeat(w))),
    ...rows.map((r) => line(cols.map((c) => cell(r[c])))),
  ].join('\n');
}

function show(result: unknown, cols?: string[]): void {
  if (o.json || !cols) {
    process.stdout.write(JSON.stringify(result, null, 2) + '\n');
    return;
  }
  const data = (result as { data?: unknown }).data ?? result;
  const rows = Array.isArray(data) ? (data as Record<string, unknown>[]) : [data as Record<string, unknown>];
  process.stdout.write(table(rows, cols) + '\n');
}

async function prompt(question: string): Promise<string> {
  if (!process.stdin.isTTY) throw new CliError('no password: pass --password or set SVC_PASSWORD');
  const { createInterface } = await import('node:readline/promises');
  const rl = createInterface({ input: process.stdin, output: process.stdout });
  try {
    return await rl.question(question);
  } finally {
    rl.close();
  }
}

async function run(): Promise<void> {
  const [group, cmd] = positionals;
  if (o.help || !group) {
    process.stdout.write(HELP + '\n');
    return;
  }
  const PROGRAM_COLS = ['id', 'name', 'slug', 'status', 'cookie_window_days', 'currency', 'api_token_masked'];
  const PARTNER_COLS = ['id', 'name', 'email', 'status', 'rejection_reason', 'source', 'claimed'];
  switch (`${group} ${cmd ?? ''}`.trim()) {
    case 'login': {
      const password = o.password ?? process.env.SVC_PASSWORD ?? (await prompt('Password: '));
      const r = (await api('POST', '/api/auth/login', { email: o.email, password }, false)) as {
        data: { session_token: string; expires_at: string };
      };
      const saved = await readFile(CREDENTIALS, 'utf8').then(
        (t) => JSON.parse(t) as Record<string, string>,
        () => ({}),
      );
      await mkdir(dirname(CREDENTIALS), { recursive: true });
      await writeFile(CREDENTIALS, JSON.stringify({ ...saved, [base]: r.data.session_token }, null, 2), {
        mode: 0o600,
      });
      return show(
        o.json ? r : { data: { logged_in: base, expires_at: r.data.expires_at } },
        o.json ? undefined : ['logged_in', 'expires_at'],
      );
    }
    case 'logout': {
      await api('POST', '/api/auth/logout');
      await rm(CREDENTIALS, { force: true });
      return show({ data: { logged_out: base } }, ['logged_out']);
    }
    case 'signup': {
      const password =
        o.password ?? process.env.SVC_PASSWORD ?? (await prompt('Password (10+ characters): '));
      const r = await api(
        'POST',
        '/api/auth/signup',
        { email: o.email, password, name: o.name, workspace_name: o.workspace },
        false,
      );
      return show(r);
    }
    case 'programs list':
      return show(await api('GET', '/api/advertiser/affiliate-programs'), PROGRAM_COLS);
    case 'programs get':
      return show(await api('GET', programPath()), [...PROGRAM_COLS, 'allowed_origins', 'commission']);
    case 'programs create':
      return show(await api('POST', `/api/advertiser/affiliate-programs${ws()}`, programFields()), [
        ...PROGRAM_COLS,
        'api_token',
      ]);
    case 'programs update':
      return show(await api('PUT', programPath(), programFields()), PROGRAM_COLS);
    case 'programs delete':
      return show(await api('DELETE', programPath()));
    case 'programs go-live':
      return show(await api('POST', programPath('/go-live')), PROGRAM_COLS);
    case 'programs regenerate-token':
      return show(await api('POST', programPath('/regenerate-api-token')), ['api_token', 'api_token_masked']);
    case 'partners list':
      return show(await api('GET', programPath('/partners')));
    case 'partners add':
      return show(
        await api('POST', programPath('/partners'), {
          name: o.name,
          email: o.email,
          status: o.status,
        }),
      );
    case 'partners approve':
      return show(await api('POST', programPath(`/partners/${arg(3, 'partner id')}/approve`)), PARTNER_COLS);
    case 'partners reject':
      return show(
        await api('POST', programPath(`/partners/${arg(3, 'partner id')}/reject`), { reason: o.reason }),
        PARTNER_COLS,
      );
    case 'partners invite':
      return show(await api('POST', programPath(`/partners/${arg(3, 'partner id')}/invite`)), [
        'invite_url',
        'expires_at',
      ]);
    case 'notifications': {
      const r = (await api(
        'GET',
        `/api/advertiser/notifications${q({
          workspace_id: o['workspace-id'],
          unread: o.unread ? 'true' : undefined,
          page: o.page,
          pageSize: o['page-size'],
        })}`,
      )) as { data: Record<string, unknown>[]; meta: { unread: number } };
      if (o.json) return show(r);
      show(r, ['id', 'created_at', 'kind', 'title', 'read_at']);
      process.stdout.write(`${r.meta.unread} unread\n`);
      return;
    }
    case 'notifications read':
      return show(
        await api('POST', `/api/advertiser/notifications/${arg(2, 'notification id')}/read${ws()}`),
        ['id', 'kind', 'title', 'read_at'],
      );
    case 'notifications read-all':
      return show(await api('POST', `/api/advertiser/notifications/read-all${ws()}`), ['updated']);
    case 'links list':
      return show(await api('GET', linksPath()), LINK_COLS);
    case 'links create':
      return show(await api('POST', linksPath(), { short_link: o['short-link'] }), LINK_COLS);
    case 'links set':
      return show(
        await api('PUT', `${linksPath()}/${arg(4, 'link id')}`, { status: arg(5, 'active|inactive') }),
        LINK_COLS,
      );
    case 'commissions list':
      return show(await api('GET', programPath(`/commissions${q({ status: o.status })}`)), COMMISSION_COLS);
    case 'commissions mark-paid':
      return show(await api('POST', `/api/advertiser/commissions/${arg(2, 'commission id')}/mark-paid`));
    case 'commissions approve':
      return show(
        await api('POST', `/api/advertiser/commissions/${arg(2, 'commission id')}/approve`),
        COMMISSION_COLS,
      );
    case 'commissions reject':
      return show(
        await api('POST', `/api/advertiser/commissions/${arg(2, 'commission id')}/reject`, {
          reason: o.reason,
        }),
        COMMISSION_COLS,
      );
    case 'payouts preview': {
      const r = (await api('GET', programPath(`/payouts/preview${q({ partner_id: o.partner })}`))) as {
        data: unknown[];
        meta: { currency: string; min_payout_cents: number; total_cents: number };
      };
      if (o.json) return show(r);
      show(withMethod(r), [
        'partner_id',
        'partner_name',
        'amount_cents',
        'currency',
        'commissions_cents',
        'recovered_cents',
        'method',
        'has_payout_method',
        'below_minimum',
      ]);
      process.stdout.write(
        `total ${r.meta.total_cents} cents ${r.meta.currency} (minimum per payout ${r.meta.min_payout_cents})\n`,
      );
      return;
    }
    case 'payouts create':
      return show(
        withMethod(
          await api('POST', programPath('/payouts'), {
            partner_ids: list(o.partner)?.map((p) => int(p, '--partner')),
          }),
        ),
        PAYOUT_COLS,
      );
    case 'payouts list':
      return show(
        withMethod(
          await api(
            'GET',
            programPath(`/payouts${q({ status: o.status, limit: o.limit, offset: o.offset })}`),
          ),
        ),
        PAYOUT_COLS,
      );
    case 'payouts show':
      return show(withMethod(await api('GET', payoutPath())), [...PAYOUT_COLS, 'commission_ids']);
    case 'payouts export':
      return exportPayouts();
    case 'payouts mark-paid':
      return show(
        withMethod(await api('POST', payoutPath('/mark-paid'), { reference: o.reference })),
        PAYOUT_COLS,
      );
    case 'payouts cancel':
      return show(withMethod(await api('POST', payoutPath('/cancel'))), [...PAYOUT_COLS, 'canceled_at']);
    case 'members list':
      return show(await api('GET', `/api/advertiser/members${ws()}`), [
        'user_id',
        'email',
        'name',
        'role',
        'status',
      ]);
    case 'members add':
      return show(await api('POST', `/api/advertiser/members${ws()}`, { email: o.email, role: o.role }), [
        'user_id',
        'email',
        'role',
        'status',
      ]);
    case 'members remove':
      return show(await api('DELETE', `/api/advertiser/members/${arg(2, 'user id')}${ws()}`));
    case 'keys list':
      return show(await api('GET', `/api/advertiser/api-keys${ws()}`), [
        'id',
        'name',
        'key_masked',
        'scopes',
        'program_scope',
        'status',
        'expires_at',
      ]);
    case 'keys create':
      return show(
        await api('POST', `/api/advertiser/api-keys${ws()}`, {
          name: o.name,
          scopes: list(o.scopes),
          program_scope: list(o.programs),
          expires_at: o.expires,
        }),
        ['id', 'name', 'key', 'scopes', 'program_scope', 'expires_at'],
      );
    case 'keys update':
      return show(
        await api('PUT', `/api/advertiser/api-keys/${arg(2, 'key id')}${ws()}`, {
          name: o.name,
          scopes: list(o.scopes),
          program_scope: o.programs === 'all' ? null : list(o.programs),
        }),
        ['id', 'name', 'key_masked', 'scopes', 'program_scope', 'status'],
      );
    case 'keys revoke':
      return show(await api('DELETE', `/api/advertiser/api-keys/${arg(2, 'key id')}${ws()}`), [
        'id',
        'name',
        'key_masked',
        'status',
      ]);
    case 'processor connect':
      return show(
        await api('PUT', `/api/advertiser/processor-connection${ws()}`, {
          status: o.status,
          account_id: o.account,
          charges_enabled: o.charges ?? false,
          payouts_enabled: o.payouts ?? false,
          details_submitted: o.details ?? false,
        }),
      );
    case 'processor roll-secret':
      return show(await api('POST', `/api/advertiser/processor-connection/roll-secret${ws()}`));
    case 'processor events':
      return show(
        await api(
          'GET',
          `/api/advertiser/processor-events${q({ program_id: arg(2, 'program id'), outcome: o.outcome, page: o.page, pageSize: o['page-size'] })}`,
        ),
        [
          'received_at',
          'type',
          'event_id',
          'outcome',
          'reason',
          'transaction_id',
          'sale_id',
          'commission_id',
        ],
      );
    case 'webhooks list':
      return show(await api('GET', `/api/advertiser/webhooks${ws()}`), WEBHOOK_COLS);
    case 'webhooks add':
      return show(
        await api('POST', `/api/advertiser/webhooks${ws()}`, {
          url: arg(2, 'endpoint url'),
          events: list(o.events),
          program_ids: list(o.programs)?.map((p) => int(p, '--programs')),
          description: o.description,
        }),
        [...WEBHOOK_COLS, 'secret'],
      );
    case 'webhooks test':
      return show(await api('POST', `${webhookPath()}/test`), ['event_id', 'type']);
    case 'webhooks deliveries':
      return show(
        await api(
          'GET',
          `${webhookPath()}/deliveries${q({ status: o.status, page: o.page, pageSize: o['page-size'] })}`,
        ),
        [
          'id',
          'type',
          'status',
          'attempts',
          'last_status_code',
          'last_error',
          'next_attempt_at',
          'webhook_id',
        ],
      );
    case 'webhooks retry':
      return show(await api('POST', `/api/advertiser/webhook-deliveries/${arg(2, 'delivery id')}/retry`), [
        'id',
        'type',
        'status',
        'attempts',
        'next_attempt_at',
      ]);
    case 'webhooks rotate':
      return show(await api('POST', `${webhookPath()}/rotate-secret`), [
        'secret',
        'previous_secret_expires_at',
      ]);
    case 'webhooks enable':
      return show(await api('POST', `${webhookPath()}/enable`), WEBHOOK_COLS);
    case 'webhooks disable':
      return show(await api('PUT', webhookPath(), { status: 'disabled' }), WEBHOOK_COLS);
    case 'webhooks delete':
      await api('DELETE', webhookPath());
      return show({ data: { deleted: int(arg(2, 'endpoint id'), 'endpoint id') } }, ['deleted']);
    case 'status':
      return show(await api('GET', `/api/tracking/status/${arg(1, 'program id')}`));
    case 'events':
      return show(
        await api(
          'GET',
          `/api/tracking/events/${arg(1, 'program id')}${q({ eventType: o.type, page: o.page, pageSize: o['page-size'], dateFrom: o.from, dateTo: o.to })}`,
        ),
        ['event_type', 'timestamp', 'id', 'click_id', 'amount_cents', 'geo_country', 'device_type'],
      );
    case 'performance': {
      const r = (await api(
        'GET',
        `/api/tracking/performance/${arg(1, 'program id')}${q({ period: o.period, dateFrom: o.from, dateTo: o.to })}`,
      )) as {
        data: Record<string, unknown>[];
        metrics: Record<string, unknown>;
      };
      if (o.json) return show(r);
      process.stdout.write(
        table(r.data, ['date', 'clicks', 'leads', 'conversions', 'revenue', 'partners', 'commission']) +
          '\n\n',
      );
      const m = Object.entries(r.metrics).filter(([, v]) => typeof v !== 'object');
      return show(
        { data: Object.fromEntries(m) },
        m.map(([k]) => k),
      );
    }
    case 'test click':
      return testEvent('click', { affiliate_url: `https://example.com/?aff=${o.aff ?? 'svc-cli-test'}` });
    case 'test lead':
      return testEvent('lead', { customer_key: o['customer-key'] ?? 'svc-cli-test' });
    case 'test sale':
      return testEvent('sale', {
        amount_cents: o['amount-cents'] ? int(o['amount-cents'], '--amount-cents') : 1000,
      });
    default:
      throw new CliError(`unknown command "${positionals.join(' ')}"; see svc --help`);
  }
}

try {
  await run();
} catch (err) {
  if (err instanceof CliError) {
    process.stderr.write(`svc: ${err.message}\n`);
    process.exit(1);
  }
  throw err;
}
