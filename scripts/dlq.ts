// npm run dlq: list, show and replay dead letters (the dead_letters table: original key, bytes, headers and
// source of each message a worker could not apply). Replay re-produces the original key, value and headers
// to the original topic (acks=all) and records each replay in dead_letter_replays; the workers dedupe by
// message identity, so a replay applies at most once however often it runs. See docs/operations.md.
import { hostname, userInfo } from 'node:os';
import { cli } from './lib/cli.ts';
import { integerIn } from '../shared/cli-args.ts';
import { loadConfig } from '../shared/config.ts';
import { createLogger } from '../shared/logger.ts';
import { createSql } from '../shared/db/sql.ts';
import type { Sql } from '../shared/db/sql.ts';
import { connectProducer, createKafka } from '../shared/pipeline/kafka.ts';
import { decodeHeaders } from '../shared/pipeline/dead-letters.ts';

const USAGE = `Usage: npm run dlq -- <command> [options]

Commands:
  list                 The dead letters, newest first: id, when, source topic/partition/offset, step, reason,
                       how often replayed.
  show <id>            One dead letter in full: key, value (JSON pretty-printed when it is JSON), headers,
                       source, reason and its replay history.
  replay               Re-produces the selected dead letters' original key, value and headers to their
                       original topic (acks=all) and records each replay. Without --id, only dead letters
                       never replayed are selected (add --again to include replayed ones). Replays are
                       idempotent: the workers apply a message once, by its identity, however often it comes.

Options (list and replay):
  --since <iso>        Only dead letters created at or after this time (e.g. 2026-05-01T00:00:00Z).
  --topic <topic>      Only those from this source topic (with or without the KAFKA_PREFIX, e.g. clicks).
  --id <id>            Only this dead letter (replay).
  --again              replay: include dead letters replayed before.
  --dry-run            replay: print what would be replayed, produce nothing.
  --limit <n>          list: at most n rows (default 50).

Environment: DATABASE_URL, KAFKA_BROKERS, KAFKA_PREFIX (as for the services).
Exit status: 0 done, 1 a failure (the replays done so far are recorded), 2 bad arguments.`;

const args = cli(USAGE, {
  since: { type: 'string' },
  topic: { type: 'string' },
  id: { type: 'string' },
  again: { type: 'boolean' },
  'dry-run': { type: 'boolean' },
  limit: { type: 'string' },
});
const v = args.values as {
  since?: string;
  topic?: string;
  id?: string;
  again?: boolean;
  'dry-run'?: boolean;
};

function bad(message: string): never {
  process.stderr.write(`${message}\n\n${USAGE}\n`);
  process.exit(2);
}

const [command, ...rest] = args.positionals;
if (!command) bad('a command is required: list, show <id> or replay');
if (!['list', 'show', 'replay'].includes(command)) bad(`unknown command "${command}"`);
if (command !== 'show' && rest.length > 0) bad(`unexpected argument "${rest[0]}"`);
let since: Date | null = null;
if (v.since !== undefined) {
  since = new Date(v.since);
  if (!/^\d{4}-\d{2}-\d{2}/.test(v.since) || Number.isNaN(since.getTime()))
    bad(`--since must be an ISO 8601 time, e.g. 2026-05-01T00:00:00Z (got "${v.since}")`);
}
const idOption = v.id === undefined ? null : integerIn(v.id, 1, Number.MAX_SAFE_INTEGER);
if (v.id !== undefined && idOption === null) bad(`--id must be a positive integer (got "${v.id}")`);
const limit = args.int('limit', 50, 100_000);

const cfg = loadConfig();
const sql = createSql(cfg.databaseUrl, 2, 'svc-dlq');
const topics = v.topic === undefined ? null : [v.topic, `${cfg.kafkaPrefix}${v.topic}`];

interface Row {
  id: string;
  created_at: Date;
  source_topic: string;
  source_partition: number;
  source_offset: string;
  step: string;
  reason: string;
  message_key: Buffer | null;
  payload: Buffer | null;
  message_headers: [string, string][] | null;
  message_timestamp: Date | null;
  replays: number;
  last_replayed_at: Date | null;
}

function select(sql: Sql, where: { id: number | null; onlyNew: boolean; newest?: number }) {
  return sql<Row[]>`
    select d.*, count(r.id)::int as replays, max(r.replayed_at) as last_replayed_at
    from dead_letters d left join dead_letter_replays r on r.dead_letter_id = d.id
    where true
      ${where.id === null ? sql`` : sql`and d.id = ${where.id}`}
      ${since === null ? sql`` : sql`and d.created_at >= ${since}`}
      ${topics === null ? sql`` : sql`and d.source_topic = any(${topics})`}
    group by d.id
    ${where.onlyNew ? sql`having count(r.id) = 0` : sql``}
    ${where.newest === undefined ? sql`order by d.id` : sql`order by d.id desc limit ${where.newest}`}`;
}

const text = (b: Buffer | null): string => {
  if (b === null) return '(null)';
  const s = b.toString('utf8');
  const control = [...s].some((c) => c.charCodeAt(0) < 0x20 && !'\t\n\r'.includes(c));
  return Buffer.from(s, 'utf8').equals(b) && !control ? s : `base64:${b.toString('base64')}`;
};
const iso = (d: Date | null) => (d ? d.toISOString() : '-');
const out = (line: string): void => void process.stdout.write(`${line}\n`);

async function list(): Promise<void> {
  const rows = await select(sql, { id: null, onlyNew: false, newest: limit });
  if (rows.length === 0) return out('no dead letters');
  out(['id', 'created_at', 'source', 'step', 'replays', 'reason'].join('\t'));
  for (const r of rows) {
    const source = `${r.source_topic}/${r.source_partition}@${r.source_offset}`;
    const reason = r.reason.length > 100 ? `${r.reason.slice(0, 99)}…` : r.reason;
    out([r.id, iso(r.created_at), source, r.step, String(r.replays), reason].join('\t'));
  }
}

async function show(rawId: string | undefined): Promise<number> {
  const id = integerIn(rawId, 1, Number.MAX_SAFE_INTEGER);
  if (id === null) bad(`show needs a dead letter id (a positive integer), got "${rawId ?? ''}"`);
  const [r] = await select(sql, { id, onlyNew: false });
  if (!r) {
    process.stderr.write(`no dead letter ${id}\n`);
    return 1;
  }
  let value = text(r.payload);
  try {
    if (r.payload) value = JSON.stringify(JSON.parse(r.payload.toString('utf8')), null, 2);
  } catch {
    // not JSON: shown as text (or base64)
  }
  out(`id:         ${r.id}`);
  out(`created_at: ${iso(r.created_at)}`);
  out(`source:     ${r.source_topic} partition ${r.source_partition} offset ${r.source_offset}`);
  out(`timestamp:  ${iso(r.message_timestamp)} (the original message's)`);
  out(`step:       ${r.step}`);
  out(`reason:     ${r.reason}`);
  out(`key:        ${text(r.message_key)}`);
  const headers = decodeHeaders(r.message_headers) ?? {};
  out(`headers:    ${Object.keys(headers).length === 0 ? '(none)' : ''}`);
  for (const [k, hv] of Object.entries(headers))
    for (const one of Array.isArray(hv) ? hv : [hv]) out(`  ${k}: ${text(Buffer.from(one as Buffer))}`);
  out(`value:\n${value}`);
  const history = await sql<{ replayed_at: Date; topic: string; replayed_by: string }[]>`
    select replayed_at, topic, replayed_by from dead_letter_replays where dead_letter_id = ${id} order by id`;
  out(`replays:    ${history.length === 0 ? 'never' : ''}`);
  for (const h of history) out(`  ${iso(h.replayed_at)} to ${h.topic} by ${h.replayed_by}`);
  return 0;
}

async function replay(): Promise<number> {
  const rows = await select(sql, { id: idOption, onlyNew: idOption === null && !v.again });
  if (rows.length === 0) {
    out(idOption === null ? 'nothing to replay' : `no dead letter ${idOption}`);
    return idOption === null ? 0 : 1;
  }
  if (v['dry-run']) {
    for (const r of rows)
      out(`would replay ${r.id} to ${r.source_topic} (${r.step}: ${r.reason.slice(0, 80)})`);
    out(`${rows.length} dead letter(s) would be replayed`);
    return 0;
  }
  const log = createLogger('dlq', cfg.logLevel === 'info' ? 'warn' : cfg.logLevel);
  const kafka = createKafka(cfg, log);
  const producer = await connectProducer(kafka);
  const by = `${userInfo().username}@${hostname()}`;
  let done = 0;
  try {
    // In order, in small batches: each batch acknowledged (acks=all) before it is recorded as replayed.
    for (let i = 0; i < rows.length; i += 100) {
      const batch = rows.slice(i, i + 100);
      const byTopic = new Map<string, Row[]>();
      for (const r of batch) byTopic.set(r.source_topic, [...(byTopic.get(r.source_topic) ?? []), r]);
      await producer.sendBatch({
        acks: -1,
        topicMessages: [...byTopic].map(([topic, rs]) => ({
          topic,
          messages: rs.map((r) => ({
            key: r.message_key,
            value: r.payload,
            headers: { ...decodeHeaders(r.message_headers), 'svc-replay-of': r.id },
          })),
        })),
      });
      await sql`
        insert into dead_letter_replays ${sql(batch.map((r) => ({ dead_letter_id: r.id, topic: r.source_topic, replayed_by: by })))}`;
      done += batch.length;
      process.stderr.write(`replayed ${done}/${rows.length}\n`);
    }
  } catch (err) {
    process.stderr.write(`replay failed after ${done} of ${rows.length}: ${(err as Error).message}\n`);
    return 1;
  } finally {
    await producer.disconnect();
  }
  out(`replayed ${done} dead letter(s): ${rows.map((r) => r.id).join(', ')}`);
  return 0;
}

let code = 0;
try {
  if (command === 'list') await list();
  else if (command === 'show') code = await show(rest[0]);
  else code = await replay();
} catch (err) {
  process.stderr.write(`dlq ${command} failed: ${(err as Error).message}\n`);
  code = 1;
} finally {
  await sql.end({ timeout: 5 });
}
process.exit(code);
