// What `npm run chaos` finds stored once the load stopped and the pipeline drained: every request answered
// 200 stored once (lost and duplicated, per phase), the ledger against the balances, and where lost clicks
// are in Kafka, if anywhere.
import { randomUUID } from 'node:crypto';
import { createKafka, readTopic } from '../../../shared/pipeline/kafka.ts';
import type { KafkaAdmin as Admin } from '../../../shared/pipeline/kafka.ts';
import type { Sql } from '../../../shared/db/sql.ts';
import type { Logger } from '../../../shared/logger.ts';
import { topicName } from '../../../shared/contracts/topics.ts';
import { balanceDifferences, commissionsWithoutCredit } from '../../../shared/ledger/check.ts';
import type { Logical } from './load.ts';
import type { Result } from './report.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Where lost clicks are in Kafka, if anywhere: reads the clicks topic from its start to its end offsets in a
 * group of its own and names each lost click's partition and offset, with the click worker's committed
 * offset of that partition. Tells a click never written (or dropped by the brokers) from one skipped by
 * the consumer.
 */
export async function whereInKafka(
  k: { admin: Admin; brokers: string; prefix: string; log: Logger },
  clickIds: string[],
): Promise<string[]> {
  const { admin, prefix: PREFIX, log } = k;
  if (clickIds.length === 0) return [];
  const topic = topicName(PREFIX, 'clicks');
  const kafkaClient = createKafka(
    { kafkaBrokers: k.brokers.split(','), kafkaClientId: 'svc-chaos-scan' },
    log,
  );
  const ends = await admin.fetchTopicOffsets(topic);
  const committed = await admin.fetchOffsets({ groupId: `${PREFIX}click-worker`, topics: [topic] });
  const committedOf = new Map(committed[0]!.partitions.map((p) => [p.partition, p.offset]));
  const remaining = new Map(ends.map((e) => [e.partition, Number(e.high)]));
  for (const [p, high] of remaining) if (high === 0) remaining.delete(p);
  const found = new Map<string, string>();
  let finish = () => {};
  const done = new Promise<void>((r) => (finish = r));
  const reader = await readTopic(kafkaClient, { topic, groupId: `svc-chaos-scan-${randomUUID()}` }, (m) => {
    const text = m.value?.toString('utf8') ?? '';
    for (const id of clickIds)
      if (text.includes(id))
        found.set(
          id,
          `partition ${m.partition} offset ${m.offset} (written ${new Date(Number(m.timestamp)).toISOString()}; the click worker's committed offset ${committedOf.get(m.partition) ?? '?'})`,
        );
    const high = remaining.get(m.partition);
    if (high !== undefined && Number(m.offset) + 1 >= high) remaining.delete(m.partition);
    if (remaining.size === 0) finish();
  });
  if (remaining.size === 0) finish();
  await Promise.race([done, sleep(60_000)]);
  await reader.close();
  return clickIds.map((id) => `${id}: ${found.get(id) ?? 'not in Kafka'}`);
}

/** Lost and duplicated, per phase, once the pipeline drained. */
export async function account(
  sql: Sql,
  programId: number,
  logical: Logical[],
  results: Result[],
): Promise<{ lost: Map<number, string[]>; dup: Map<number, string[]>; ledger: string[] }> {
  const lost = new Map<number, string[]>();
  const dup = new Map<number, string[]>();
  const add = (m: Map<number, string[]>, ph: number, what: string) => m.set(ph, [...(m.get(ph) ?? []), what]);
  const ok = logical.filter((l) => l.ok);
  const clicks = ok.filter((l) => l.kind === 'click').map((l) => l.ref);
  const leads = ok.filter((l) => l.kind === 'lead').map((l) => l.ref);
  // Wait for the pipeline to drain: every answered click stored (bounded).
  const deadline = Date.now() + 120_000;
  for (;;) {
    const [n] = await sql<{ n: number }[]>`
      select count(distinct click_id)::int as n from click_events where click_id = any(${clicks})`;
    if (n!.n >= clicks.length || Date.now() > deadline) break;
    await sleep(500);
  }
  await sleep(2000);
  const storedClicks = new Map(
    (
      await sql<{ click_id: string; n: number }[]>`
        select click_id, count(*)::int as n from click_events where program_id = ${programId} group by click_id`
    ).map((r) => [r.click_id, r.n]),
  );
  const storedSales = new Map(
    (
      await sql<{ transaction_id: string; n: number }[]>`
        select transaction_id, count(*)::int as n from sales where program_id = ${programId} group by transaction_id`
    ).map((r) => [r.transaction_id, r.n]),
  );
  const leadRows = new Set(
    (
      await sql<{ click_id: string }[]>`
        select click_id from customers where click_id = any(${leads}) and customer_status <> 'click'`
    ).map((r) => r.click_id),
  );
  const refunded = new Map(
    (
      await sql<{ transaction_id: string; status: string }[]>`
        select s.transaction_id, c.status from sales s join commissions c on c.sale_id = s.id
        where s.program_id = ${programId}`
    ).map((r) => [r.transaction_id, r.status]),
  );
  const ledgerDup = await sql<{ commission_id: string; kind: string; n: number }[]>`
    select e.commission_id, e.kind, count(*)::int as n from ledger_entries e
    join commissions c on c.id = e.commission_id join sales s on s.id = c.sale_id
    where s.program_id = ${programId} group by 1, 2 having count(*) > 1`;
  const phaseOfTxn = new Map(logical.filter((l) => l.kind === 'sale').map((l) => [l.ref, l.phase]));
  for (const l of ok) {
    if (l.kind === 'click' && !storedClicks.has(l.ref)) add(lost, l.phase, `click ${l.ref}`);
    if (l.kind === 'sale' && !storedSales.has(l.ref)) add(lost, l.phase, `sale ${l.ref}`);
    if (l.kind === 'lead' && !leadRows.has(l.ref)) add(lost, l.phase, `lead ${l.ref}`);
    if (l.kind === 'refund') {
      const status = l.answer?.status;
      if ((status === 'reversed' || status === 'refunded') && refunded.get(l.ref) !== status)
        add(lost, l.phase, `refund ${l.ref}`);
    }
  }
  const clickPhase = new Map(ok.filter((l) => l.kind === 'click').map((l) => [l.ref, l.phase]));
  for (const [id, n] of storedClicks) if (n > 1) add(dup, clickPhase.get(id) ?? 0, `click ${id} ×${n}`);
  for (const [txn, n] of storedSales) if (n > 1) add(dup, phaseOfTxn.get(txn) ?? 0, `sale ${txn} ×${n}`);
  for (const d of ledgerDup) add(dup, 0, `ledger ${d.kind} of commission ${d.commission_id} ×${d.n}`);
  // Counters that count a click twice show as a link counter above its stored rows. They count people
  // only: the human rows; the bots sent are counted apart, each stored as `bot` and nothing else.
  const counters = await sql<{ short_link: string; clicks: number; stored: number }[]>`
    select l.short_link, l.clicks::int,
           (select count(*)::int from click_events e where e.link_id = l.id and not e.is_test and e.quality = 'human') as stored
    from referral_links l where l.program_id = ${programId}`;
  for (const c of counters)
    if (c.clicks !== c.stored)
      add(dup, 0, `link ${c.short_link} counts ${c.clicks} clicks, ${c.stored} human rows stored`);
  const sentBots = new Map(ok.filter((l) => l.kind === 'click' && l.bot).map((l) => [l.ref, l.phase]));
  // Every bot click sent, answered 200 or not (a 503 may still have been stored), by its event_id.
  const botEvents = new Set(
    logical.flatMap((l) => (l.kind === 'click' && l.bot && l.eventId ? [l.eventId] : [])),
  );
  const filtered = await sql<{ click_id: string; quality: string; client_event_id: string | null }[]>`
    select e.click_id, e.quality, c.client_event_id::text
    from click_events e
    left join click_client_events c on c.program_id = e.program_id and c.event_id = e.event_id
    where e.program_id = ${programId} and not e.is_test and e.quality <> 'human'`;
  const filteredIds = new Set(filtered.map((r) => r.click_id));
  for (const r of filtered)
    if (!sentBots.has(r.click_id) && !(r.client_event_id !== null && botEvents.has(r.client_event_id)))
      add(dup, 0, `click ${r.click_id} stored as ${r.quality}, sent as a person's`);
  for (const [id, phase] of sentBots)
    if (storedClicks.has(id) && !filteredIds.has(id))
      add(lost, phase, `bot click ${id} stored as a person's`);
  for (const r of results) {
    r.lost = lost.get(r.phase)?.length ?? 0;
    r.dup = dup.get(r.phase)?.length ?? 0;
  }
  return { lost, dup, ledger: await ledgerProblems(sql, programId) };
}

/**
 * The ledger afterwards: every commission of the program has its commission_created entry (once the
 * ledger worker drained, bounded), and each partner's and partner-program's balance equals the sum of its
 * entries (shared/ledger/check.ts). Returns what differs.
 */
export async function ledgerProblems(sql: Sql, programId: number): Promise<string[]> {
  const deadline = Date.now() + 120_000;
  let missing: { id: string }[] = [];
  for (;;) {
    missing = await commissionsWithoutCredit(sql, programId);
    if (missing.length === 0 || Date.now() > deadline) break;
    await sleep(500);
  }
  return [
    ...(missing.length ? [`${missing.length} commission(s) without their ledger entry`] : []),
    ...(await balanceDifferences(sql, programId)),
  ];
}
