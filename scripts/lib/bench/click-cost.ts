// Phase (e) of bench:clicks (--breakdown-cost): what the dimensional rollup costs the click worker. Four
// rounds, off, on, on, off (so a drift over time weighs on both sides alike): the ingress accepts `clicks`
// clicks while no worker runs, then a click worker drains them with ROLLUP_BREAKDOWN=off or on.
import type { Sql } from '../../../shared/db/sql.ts';
import { LoadCounters, int, runLoad } from './bench.ts';
import type { BenchControl } from './control.ts';
import type { ClickBenchOutput } from './click-output.ts';
import type { ClickBenchProbe } from './click-probe.ts';
import { costRequests } from './click-traffic.ts';
import type { Seed } from './click-traffic.ts';
import { spawnService } from '../stack/services.ts';

export interface CostRound {
  mode: 'off' | 'on';
  rows: number;
  seconds: number;
  rate: number;
}

export interface CostOptions {
  control: BenchControl;
  output: ClickBenchOutput;
  probe: ClickBenchProbe;
  sql: Sql;
  seed: Seed;
  /** The services' environment. */
  env: Record<string, string>;
  url: string;
  connections: number;
  clicks: number;
}

/** The four rounds (no click worker may run when called); what went wrong is added to `problems`. */
export async function breakdownCost(o: CostOptions, problems: string[]): Promise<CostRound[]> {
  const { control, output, probe, sql, seed } = o;
  const linkIds = seed.links.map((l) => l.id);
  const cost: CostRound[] = [];
  for (const [i, mode] of (['off', 'on', 'on', 'off'] as const).entries()) {
    const tag = `d${i}`;
    const counters = new LoadCounters();
    output.setPhase(`(e) round ${i + 1}/4: accepting ${int(o.clicks)} clicks`, counters);
    await runLoad({
      url: o.url,
      requests: costRequests(seed, tag),
      connections: o.connections,
      amount: o.clicks,
      maxMs: o.clicks * 20 + 60_000,
      counters,
      signal: control.signal,
    });
    control.signal.throwIfAborted();
    output.setPhase(`(e) round ${i + 1}/4: draining with ROLLUP_BREAKDOWN=${mode}`, null);
    const w = spawnService('click-worker', {
      env: { ...o.env, LOG_LEVEL: 'info', ROLLUP_BREAKDOWN: mode },
      onLine: output.onWorkerLine,
    });
    control.onCleanup(`click worker (e${i})`, () => w.stop());
    control.guard(w);
    probe.pids.worker = w.child.pid;
    const drained = await probe.drainBacklog(1_800_000);
    if (drained.timedOut) problems.push(`(e) round ${i + 1}: the worker did not drain in time`);
    const [r] = await sql<{ n: string; first: Date | null }[]>`
      select count(*)::text as n, min(created_at) as first from click_events
      where link_id = any(${linkIds}::bigint[]) and page_url like ${`https://shop.example/bench/${tag}/%`}`;
    const rows = Number(r!.n);
    if (rows < counters.accepted)
      problems.push(`(e) round ${i + 1}: ${counters.accepted} accepted, ${rows} rows`);
    const seconds = Math.max(0.001, (drained.at - (r!.first?.getTime() ?? drained.at)) / 1000);
    cost.push({ mode, rows, seconds, rate: rows / seconds });
    control.retire(w);
    await w.stop();
  }
  return cost;
}
