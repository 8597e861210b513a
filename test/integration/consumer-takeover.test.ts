// Two click workers share the clicks topic; one is killed with -9. Its partitions go to the survivor once
// the survivor sees its heartbeats stop (shared/pipeline/liveness.ts, startEvictor), not when the Kafka
// coordinator expires its session: that is set to 180 s here, so a takeover within 90 s (about 6 s on a
// quiet machine) can only be the eviction, and clicks written to the dead worker's partitions are stored.
import t from 'tap';
import { spawnService, lineWatcher } from '../../scripts/lib/stack/services.ts';
import type { ServiceProcess } from '../../scripts/lib/stack/services.ts';
import { groupsWithOrphans } from '../../scripts/lib/chaos/cluster-state.ts';
import { createLink, createProgram, postJson, startServices, testSql, waitFor } from '../helpers/stack.ts';

const SESSION_MS = 180_000;
const PARTITIONS = 4;
const sql = testSql(t);

t.test('a killed worker’s partitions go to its sibling long before the session timeout', async (t) => {
  const svc = await startServices(t, ['web'], { KAFKA_SESSION_TIMEOUT_MS: String(SESSION_MS) });
  const group = `${svc.prefix}click-worker`;
  const watcher = lineWatcher();
  const workers: ServiceProcess[] = [];
  t.teardown(() => Promise.all(workers.map((w) => w.stop())));
  for (let i = 0; i < 2; i++) {
    const w = spawnService('click-worker', {
      env: { ...svc.env, LOG_LEVEL: 'info' },
      onLine: (line) => {
        watcher.onLine(line);
        if (/level":[45]0/.test(line)) svc.output.push(`[worker ${i + 1}] ${line}`);
      },
    });
    workers.push(w);
    await watcher.waitFor(/click worker running/, 120_000);
  }
  const [a, b] = workers as [ServiceProcess, ServiceProcess];
  // Both members, each with a share of the partitions.
  await waitFor(
    'both workers owning partitions',
    async () => {
      const rows = await sql<{ n: number }[]>`
        select count(*)::int as n from consumer_heartbeats
        where group_id = ${group} and cardinality(partitions) > 0 and beat_at > now() - interval '2 seconds'`;
      return rows[0]!.n === 2;
    },
    120_000,
    200,
  );

  const killed = Date.now();
  await a.kill();
  const groups = new Map([[group, PARTITIONS]]);
  await waitFor(
    'every partition owned by the surviving worker',
    async () => (await groupsWithOrphans(sql, groups, [a.child.pid!])).length === 0,
    SESSION_MS / 2,
    200,
  );
  const takeover = Date.now() - killed;
  t.ok(
    takeover < SESSION_MS / 2,
    `the survivor owns every partition ${takeover} ms after the kill (session timeout ${SESSION_MS} ms)`,
  );
  t.equal(b.child.exitCode, null, 'the survivor runs');

  // Clicks on every partition, the dead worker's included, are stored by the survivor.
  const program = await createProgram(sql);
  const link = await createLink(sql, program.id);
  const ids: string[] = [];
  for (let i = 0; i < 20; i++) {
    const r = await postJson(`${svc.baseUrl}/api/v1/track/click`, {
      affiliate_url: `https://x.example/?aff=${link.shortLink}`,
    });
    t.equal(r.status, 200);
    ids.push(String(r.body.click_id));
  }
  await waitFor(
    'all 20 clicks stored',
    async () => {
      const [r] = await sql<{ n: number }[]>`
        select count(*)::int as n from click_events where click_id = any(${ids})`;
      return r!.n === ids.length;
    },
    SESSION_MS / 2,
    200,
  );
  t.pass('every click stored');
});
