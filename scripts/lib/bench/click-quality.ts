// Issue 31's phases of bench:clicks (traffic quality, shared/tracking/quality.ts):
//   (f) --bot-share <pct>: a mixed run on a program of its own, a share of the clicks from real crawlers and
//       link-preview fetchers or with a prefetch header; then the rows' qualities against what was sent, and
//       every counter and rollup against the human rows (a correctness check: a mismatch fails the run).
//   (g) --classifier-cost: the click path with the ingress's classifier off (CLICK_CLASSIFIER=false) and on,
//       four rounds off, on, on, off (as (e)): each round a fresh web process and click worker, realistic
//       browser user agents plus a share never seen before (the classifier's uncached path); the ingress's
//       accepted/s and the end-to-end persisted/s of each, and the ratios on/off.
import type { Sql } from '../../../shared/db/sql.ts';
import { LoadCounters, int, runLoad } from './bench.ts';
import type { BenchRequest } from './bench.ts';
import type { BenchControl } from './control.ts';
import type { ClickBenchOutput } from './click-output.ts';
import type { ClickBenchProbe } from './click-probe.ts';
import type { CostOptions } from './click-cost.ts';
import { USER_AGENTS } from './click-traffic.ts';
import type { Seed } from './click-traffic.ts';
import { spawnService, waitForWeb } from '../stack/services.ts';

/** Real browsers: the (a)-(e) five, Edge, Samsung Internet, Firefox on Windows, Chrome on iPad. */
export const BROWSER_UAS = [
  ...USER_AGENTS,
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36 Edg/126.0.2592.68',
  'Mozilla/5.0 (Linux; Android 14; SM-S921B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/25.0 Chrome/121.0.0.0 Mobile Safari/537.36',
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:127.0) Gecko/20100101 Firefox/127.0',
  'Mozilla/5.0 (iPad; CPU OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/126.0.6478.54 Mobile/15E148 Safari/604.1',
];

/** A Chrome user agent with a build number never sent before (runLoad numbers "[<n>]" at each send). */
const UNIQUE_UA =
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.[<n>].0 Safari/537.36';

/** Crawlers and the link-preview fetchers of chat apps and social networks, as they send themselves. */
export const BOT_UAS = [
  'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
  'Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)',
  'Mozilla/5.0 (compatible; AhrefsBot/7.0; +http://ahrefs.com/robot/)',
  'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)',
  'WhatsApp/2.23.20.0',
  'facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)',
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_11_1) AppleWebKit/601.2.4 (KHTML, like Gecko) Version/9.0.1 Safari/601.2.4 facebookexternalhit/1.1 Facebot Twitterbot/1.0',
  'TelegramBot (like TwitterBot)',
  'Mozilla/5.0 (compatible; Discordbot/2.0; +https://discordapp.com)',
  'LinkedInBot/1.0 (compatible; Mozilla/5.0; Apache-HttpClient +http://www.linkedin.com)',
];

/** Browsers' speculative fetches: a person's user agent, a prefetch header (Chrome's, the older one). */
const PREFETCH_HEADERS: Record<string, string>[] = [
  { 'sec-purpose': 'prefetch;prerender' },
  { purpose: 'prefetch' },
];

/** Of (g)'s clicks, the share (%) whose user agent was never seen before. */
export const UNIQUE_UA_PERCENT = 5;

const body = (l: { shortLink: string }, tag: string, n: number, ua: string) =>
  JSON.stringify({
    affiliate_url: `https://shop.example/?aff=${l.shortLink}`,
    page_url: `https://shop.example/bench/${tag}/products/${n % 50}`,
    user_agent: ua,
  });

/** (g)'s clicks: 20 per link, one in 20 (UNIQUE_UA_PERCENT) with a user agent never seen before. */
export function classifierRequests(seed: Seed, tag: string): BenchRequest[] {
  const out: BenchRequest[] = [];
  for (const [i, l] of seed.links.entries()) {
    for (let v = 0; v < 100 / UNIQUE_UA_PERCENT; v++) {
      const n = i * 20 + v;
      const ua = v === 0 ? UNIQUE_UA : BROWSER_UAS[n % BROWSER_UAS.length]!;
      out.push({ link: l.shortLink, body: body(l, tag, n, ua) });
    }
  }
  return out;
}

export type SentKind = 'human' | 'bot' | 'prefetch';

/**
 * (f)'s clicks: 100 per cycle, `percent` of them spread evenly filtered ones: three in four from a crawler
 * or link-preview fetcher, one in four a person's user agent with a prefetch header. Each request's `link`
 * is "<kind> <short link>", so the load counters count what was accepted of each kind.
 */
export function mixedRequests(seed: Seed, percent: number, tag: string): BenchRequest[] {
  const out: BenchRequest[] = [];
  let filtered = 0;
  for (let j = 0; j < 100; j++) {
    const l = seed.links[j % seed.links.length]!;
    const isFiltered = Math.floor(((j + 1) * percent) / 100) > Math.floor((j * percent) / 100);
    let kind: SentKind = 'human';
    let ua = BROWSER_UAS[j % BROWSER_UAS.length]!;
    let headers: Record<string, string> | undefined;
    if (isFiltered) {
      kind = filtered % 4 === 3 ? 'prefetch' : 'bot';
      if (kind === 'bot') ua = BOT_UAS[filtered % BOT_UAS.length]!;
      else headers = PREFETCH_HEADERS[filtered % PREFETCH_HEADERS.length];
      filtered++;
    }
    out.push({ link: `${kind} ${l.shortLink}`, body: body(l, tag, j, ua), ...(headers && { headers }) });
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------
// (f) the mixed run

export interface MixedResult {
  percent: number;
  /** Accepted answers by kind (the client's count). */
  sent: Record<SentKind, number>;
  /** Requests of unknown outcome (errors, 503): may or may not be rows. */
  unknown: number;
  rows: Record<SentKind, number>;
  linkClicks: number;
  partnerProgramClicks: number;
  dailyClicks: number;
  breakdownLinkClicks: number;
  problems: string[];
}

export interface MixedOptions {
  control: BenchControl;
  output: ClickBenchOutput;
  probe: ClickBenchProbe;
  sql: Sql;
  /** A program of its own, so that its counters hold (f)'s clicks only. */
  seed: Seed;
  url: string;
  connections: number;
  clicks: number;
  percent: number;
}

/** Runs (f) against the running web process and click worker; its problems are also in the result. */
export async function mixedRun(o: MixedOptions): Promise<MixedResult> {
  const { control, output, probe, sql, seed, percent } = o;
  const counters = new LoadCounters();
  output.setPhase(`(f) ${int(o.clicks)} clicks, ${percent}% bots and prefetches`, counters);
  await runLoad({
    url: o.url,
    requests: mixedRequests(seed, percent, 'f'),
    connections: o.connections,
    amount: o.clicks,
    maxMs: o.clicks * 20 + 60_000,
    counters,
    signal: control.signal,
  });
  control.signal.throwIfAborted();
  output.setPhase('(f) waiting for the worker to catch up', counters);
  const drained = await probe.drainBacklog(540_000);
  const problems: string[] = [];
  if (drained.timedOut) problems.push('(f): the worker did not catch up in time');

  const sent: Record<SentKind, number> = { human: 0, bot: 0, prefetch: 0 };
  for (const [key, n] of counters.perLink) sent[key.split(' ')[0] as SentKind] += n;
  const linkIds = seed.links.map((l) => l.id);
  const rows: Record<SentKind, number> = { human: 0, bot: 0, prefetch: 0 };
  const byQuality = await sql<{ quality: SentKind; n: string }[]>`
    select quality, count(*)::text as n from click_events
    where link_id = any(${linkIds}::bigint[]) and not is_test group by quality`;
  for (const r of byQuality) rows[r.quality] = Number(r.n);
  const [agg] = await sql<{ links: string; pp: string; daily: string; breakdown: string }[]>`
    select (select coalesce(sum(clicks), 0) from referral_links where id = any(${linkIds}::bigint[]))::text as links,
           (select coalesce(sum(clicks), 0) from partner_programs where id = any(${seed.partnerProgramIds}::bigint[]))::text as pp,
           (select coalesce(sum(clicks), 0) from program_daily_stats where program_id = ${seed.programId})::text as daily,
           (select coalesce(sum(clicks), 0) from program_daily_breakdown
             where program_id = ${seed.programId} and dimension = 'link')::text as breakdown`;
  const unknown = counters.unknown;
  // What was accepted is a row; a request of unknown outcome may be one too.
  const within = (got: number, accepted: number) => got >= accepted && got <= accepted + unknown;
  const sentFiltered = sent.bot + sent.prefetch;
  const filtered = rows.bot + rows.prefetch;
  const extra = unknown ? ` (${int(unknown)} requests of unknown outcome)` : '';
  if (!within(filtered, sentFiltered))
    problems.push(
      `(f): ${int(filtered)} rows filtered (bot/prefetch), ${int(sentFiltered)} bots sent${extra}`,
    );
  for (const k of ['bot', 'prefetch', 'human'] as const)
    if (!within(rows[k], sent[k]))
      problems.push(`(f): ${int(rows[k])} rows of quality ${k}, ${int(sent[k])} ${k} clicks sent${extra}`);
  const result: MixedResult = {
    percent,
    sent,
    unknown,
    rows,
    linkClicks: Number(agg!.links),
    partnerProgramClicks: Number(agg!.pp),
    dailyClicks: Number(agg!.daily),
    breakdownLinkClicks: Number(agg!.breakdown),
    problems,
  };
  const totals = {
    'link counters': result.linkClicks,
    'partner-program clicks': result.partnerProgramClicks,
    'daily stats clicks': result.dailyClicks,
    'daily breakdown clicks (by link)': result.breakdownLinkClicks,
  };
  for (const [name, n] of Object.entries(totals))
    if (n !== rows.human) problems.push(`(f): ${name} ${int(n)} != ${int(rows.human)} human rows`);
  return result;
}

// ---------------------------------------------------------------------------------------------------
// (g) the classifier's cost

export interface ClassifierRound {
  mode: 'off' | 'on';
  accepted: number;
  /** Ingress: accepted clicks per second of the run. */
  ingressRate: number;
  rows: number;
  /** End to end: rows per second from the run's start until the worker caught up. */
  persistedRate: number;
}

/** As (e)'s options, but each round starts its own web process on `webPort` instead of a given URL. */
export interface ClassifierOptions extends Omit<CostOptions, 'url'> {
  webPort: number;
}

/** The four rounds (no web process nor click worker may run when called); failures go to `problems`. */
export async function classifierCost(o: ClassifierOptions, problems: string[]): Promise<ClassifierRound[]> {
  const { control, output, probe, sql, seed } = o;
  const linkIds = seed.links.map((l) => l.id);
  const url = `http://127.0.0.1:${o.webPort}/api/v1/track/click`;
  const rounds: ClassifierRound[] = [];
  for (const [i, mode] of (['off', 'on', 'on', 'off'] as const).entries()) {
    const step = `(g) round ${i + 1}/4, CLICK_CLASSIFIER ${mode}`;
    output.setPhase(`${step}: starting`, null);
    const env = { ...o.env, CLICK_CLASSIFIER: mode === 'on' ? 'true' : 'false' };
    const web = spawnService('web', { env, onLine: output.onWebLine });
    control.onCleanup(`web (g${i})`, () => web.stop());
    control.guard(web);
    await control.unlessAborted(waitForWeb(web, o.webPort));
    const worker = spawnService('click-worker', {
      env: { ...env, LOG_LEVEL: 'info' },
      onLine: output.onWorkerLine,
    });
    control.onCleanup(`click worker (g${i})`, () => worker.stop());
    control.guard(worker);
    probe.pids.web = web.child.pid;
    probe.pids.worker = worker.child.pid;
    await control
      .unlessAborted(output.workerWatcher.waitFor(/click worker running/, 60_000))
      .catch((err: Error) => {
        if (control.signal.aborted) throw err;
      });
    // A fresh process compiles its hot path first (JIT): a warm-up, drained, before the measured run.
    const warm = new LoadCounters();
    output.setPhase(`${step}: warming up`, warm);
    await runLoad({
      url,
      requests: classifierRequests(seed, `gw${i}`),
      connections: o.connections,
      amount: Math.min(o.clicks, Math.max(o.connections * 20, Math.round(o.clicks / 10))),
      maxMs: o.clicks * 20 + 60_000,
      counters: warm,
      signal: control.signal,
    });
    control.signal.throwIfAborted();
    await probe.drainBacklog(540_000);
    const tag = `g${i}`;
    const counters = new LoadCounters();
    output.setPhase(`${step}: ${int(o.clicks)} clicks`, counters);
    const t = probe.snap();
    const run = await runLoad({
      url,
      requests: classifierRequests(seed, tag),
      connections: o.connections,
      amount: o.clicks,
      maxMs: o.clicks * 20 + 60_000,
      counters,
      signal: control.signal,
    });
    control.signal.throwIfAborted();
    output.setPhase(`${step}: waiting for the worker to catch up`, counters);
    const drained = await probe.drainBacklog(1_800_000);
    probe.cpuPhase(step, t);
    if (drained.timedOut) problems.push(`${step}: the worker did not catch up in time`);
    const [r] = await sql<{ n: string }[]>`
      select count(*)::text as n from click_events
      where link_id = any(${linkIds}::bigint[]) and page_url like ${`https://shop.example/bench/${tag}/%`}`;
    const rows = Number(r!.n);
    if (rows < counters.accepted) problems.push(`${step}: ${counters.accepted} accepted, ${rows} rows`);
    rounds.push({
      mode,
      accepted: run.accepted,
      ingressRate: run.accepted / Math.max(0.001, run.seconds),
      rows,
      persistedRate: rows / Math.max(0.001, (drained.at - run.startedAt) / 1000),
    });
    control.retire(web, worker);
    await worker.stop();
    await web.stop();
    delete probe.pids.web;
    delete probe.pids.worker;
  }
  return rounds;
}

// ---------------------------------------------------------------------------------------------------
// Report

/** The issue's bound: the classifier costs at most 5 % of the click path (a ratio on/off of 0.95). */
export const CLASSIFIER_TARGET = 0.95;

export function qualityReport(mixed: MixedResult | null, rounds: ClassifierRound[], clicks: number): string {
  const out: string[] = [];
  if (mixed) {
    const { sent, rows } = mixed;
    out.push(
      '',
      `(f) mixed traffic, ${mixed.percent}% bots and prefetches: ${mixed.problems.length ? 'FAIL' : 'PASS'}`,
      `  sent (accepted): ${int(sent.human)} human, ${int(sent.bot)} bot, ${int(sent.prefetch)} prefetch` +
        ` = ${int(sent.bot + sent.prefetch)} bots sent; requests of unknown outcome ${int(mixed.unknown)}`,
      `  rows stored: ${int(rows.human)} human, ${int(rows.bot)} bot, ${int(rows.prefetch)} prefetch` +
        ` = ${int(rows.bot + rows.prefetch)} filtered`,
      `  counted clicks (must equal the human rows): link counters ${int(mixed.linkClicks)}, partner-program ` +
        `${int(mixed.partnerProgramClicks)}, daily stats ${int(mixed.dailyClicks)}, daily breakdown by link ` +
        `${int(mixed.breakdownLinkClicks)}`,
      ...mixed.problems.map((p) => `  - ${p}`),
    );
  }
  if (rounds.length) {
    const mean = (mode: 'off' | 'on', k: 'ingressRate' | 'persistedRate') => {
      const rs = rounds.filter((r) => r.mode === mode);
      return rs.reduce((s, r) => s + r[k], 0) / Math.max(1, rs.length);
    };
    const ratio = (k: 'ingressRate' | 'persistedRate') => mean('on', k) / Math.max(0.001, mean('off', k));
    const verdict = (x: number) => (x >= CLASSIFIER_TARGET ? 'PASS' : 'MISS');
    const ing = ratio('ingressRate');
    const e2e = ratio('persistedRate');
    out.push(
      '',
      `(g) the click classifier's cost: ${int(clicks)} clicks a round, ${BROWSER_UAS.length} browser user agents ` +
        `and ${UNIQUE_UA_PERCENT}% never seen before; target: on/off >= ${CLASSIFIER_TARGET} (at most 5% slower)`,
      `  rounds: ${rounds.map((r) => `${r.mode} ${int(r.ingressRate)} accepted/s, ${int(r.persistedRate)} persisted/s`).join('; ')}`,
      `  ingress accepted/s:      off ${int(mean('off', 'ingressRate'))}, on ${int(mean('on', 'ingressRate'))}, ` +
        `on/off ${ing.toFixed(3)} ${verdict(ing)}`,
      `  end to end persisted/s:  off ${int(mean('off', 'persistedRate'))}, on ${int(mean('on', 'persistedRate'))}, ` +
        `on/off ${e2e.toFixed(3)} ${verdict(e2e)}`,
    );
  }
  return out.length ? `${out.join('\n')}\n` : '';
}
