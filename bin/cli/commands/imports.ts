// svc import and svc imports (docs/importing.md): start an import from Rewardful, Dub or a CSV file, follow
// it, list, show and cancel imports, write their error rows as CSV, and list a source's campaigns for
// --campaigns. A source's secret is never an argument (it would show in `ps` and the shell's history): it is
// read from an environment variable ($SVC_IMPORT_SECRET, or the one --secret-env names), else prompted for.
import { readFile, writeFile } from 'node:fs/promises';
import { toCsv } from '../../../shared/csv.ts';
import { CliError, api, arg, given, idArg, list, o, prompt, show } from '../context.ts';
import type { Commands } from '../context.ts';

const IMPORT_COLS = ['id', 'source', 'status', 'step', 'dry_run', 'created_at', 'finished_at', 'error'];
const COUNT_COLS = ['kind', 'created', 'updated', 'skipped', 'failed'];
const ERROR_COLS = ['kind', 'external_id', 'code', 'message'] as const;

type Import = {
  id: number;
  status: string;
  step: string;
  counts: Record<string, Record<string, number>>;
};

// `svc imports <command> <programId> [<importId>]`
const program = () => ({ id: idArg(2, 'program id') });
const oneImport = () => ({ path: { id: idArg(2, 'program id'), importId: idArg(3, 'import id') } });

/** The source's secret: from the environment, else a prompt (never an argument). */
async function secret(source: string): Promise<string> {
  const name = o['secret-env'] ?? 'SVC_IMPORT_SECRET';
  const v = process.env[name];
  if (v) return v;
  const what = source === 'rewardful' ? "Rewardful's API Secret" : 'the Dub API key';
  return prompt(`${what} (or set $${name}): `);
}

const ENDED = new Set(['completed', 'failed', 'canceled']);

/** Prints the import and its counts (--json: the API's JSON). */
function report(imp: Import): void {
  if (o.json) return show({ data: imp });
  show({ data: imp }, IMPORT_COLS);
  process.stdout.write('\n');
  show({ data: Object.entries(imp.counts).map(([kind, c]) => ({ kind, ...c })) }, COUNT_COLS);
}

/** --wait: follows the import until it ends, a line on stderr at each step; exit 1 unless it completed. */
async function follow(programId: number, imp: Import): Promise<void> {
  let last = '';
  while (!ENDED.has(imp.status)) {
    await new Promise((r) => setTimeout(r, 1000));
    const r = await api.GET('/api/advertiser/affiliate-programs/{id}/imports/{importId}', {
      params: { path: { id: programId, importId: imp.id } },
    });
    imp = r.data as Import;
    const line = `${imp.status} ${imp.step}: ${Object.entries(imp.counts)
      .map(([k, c]) => `${k} ${c.created}+${c.updated}`)
      .join(', ')}`;
    if (line !== last) process.stderr.write(`${line}\n`);
    last = line;
  }
  report(imp);
  if (imp.status !== 'completed') throw new CliError(`import ${imp.id} ${imp.status}`);
}

async function start(): Promise<void> {
  const id = Number(idArg(1, 'program id'));
  const source = arg(2, 'source (rewardful, dub or csv)');
  let imp: Import;
  if (source === 'csv') {
    if (!o.file) throw new CliError('missing --file <path> of the CSV; see svc --help');
    const text = await readFile(o.file, 'utf8');
    const r = await api.raw.POST('/api/advertiser/affiliate-programs/{id}/imports', {
      params: { path: { id }, query: { source: 'csv', ...(o['dry-run'] ? { dry_run: 'true' } : {}) } },
      body: text as never,
      bodySerializer: (b: unknown) => b as string,
      headers: { 'content-type': 'text/csv' },
    });
    imp = (r.data as { data: Import }).data;
  } else {
    const field = source === 'rewardful' ? 'api_secret' : 'api_key';
    const r = await api.POST('/api/advertiser/affiliate-programs/{id}/imports', {
      params: { path: { id } },
      body: {
        source: given(source),
        credentials: { [field]: await secret(source) },
        options: {
          ...(o['api-base-url'] ? { api_base_url: o['api-base-url'] } : {}),
          ...(o.campaigns ? { campaign_ids: list(o.campaigns) } : {}),
          ...(o['include-inactive'] ? { include_inactive: true } : {}),
          ...(o['dry-run'] ? { dry_run: true } : {}),
        },
      },
    });
    imp = r.data as Import;
  }
  if (o.wait) return follow(id, imp);
  report(imp);
}

export const importCommands: Commands = {
  import: start,
  async 'imports list'() {
    show(
      await api.GET('/api/advertiser/affiliate-programs/{id}/imports', { params: { path: program() } }),
      IMPORT_COLS,
    );
  },
  async 'imports show'() {
    const r = await api.GET('/api/advertiser/affiliate-programs/{id}/imports/{importId}', {
      params: oneImport(),
    });
    report(r.data as Import);
  },
  async 'imports errors'() {
    const r = await api.GET('/api/advertiser/affiliate-programs/{id}/imports/{importId}/errors', {
      params: oneImport(),
    });
    if (o.json) return show(r);
    const rows = r.data as Record<(typeof ERROR_COLS)[number], string>[];
    const csv = toCsv(
      ERROR_COLS,
      rows.map((e) => ERROR_COLS.map((c) => e[c])),
    );
    if (o.out) {
      await writeFile(o.out, csv);
      process.stdout.write(`wrote ${rows.length} error rows to ${o.out}\n`);
    } else process.stdout.write(csv);
  },
  async 'imports cancel'() {
    const r = await api.POST('/api/advertiser/affiliate-programs/{id}/imports/{importId}/cancel', {
      params: oneImport(),
    });
    report(r.data as Import);
  },
  async 'imports campaigns'() {
    const source = arg(3, 'source (rewardful or dub)');
    const r = await api.POST('/api/advertiser/affiliate-programs/{id}/imports/campaigns', {
      params: { path: program() },
      body: {
        source: given(source),
        credentials: { [source === 'rewardful' ? 'api_secret' : 'api_key']: await secret(source) },
        options: o['api-base-url'] ? { api_base_url: o['api-base-url'] } : {},
      },
    });
    show(r, ['id', 'name', 'commission']);
  },
};
