// The --help text of npm run bench:clicks (scripts/bench-clicks.ts): what each phase measures and prints.
export const USAGE = `Usage: npm run bench:clicks [-- options]

Benchmarks the click path on this machine, everything on 127.0.0.1, in one run:
  (a) a bare Fastify process answering what a click answers (autocannon, closed loop): req/s
  (b) the real ingress (POST /api/v1/track/click) with the click worker stopped: accepted clicks/s, b/a
      then the click worker starts and drains (b)'s backlog: time and rows/s
  (c) a fixed offered rate for a fixed time with the worker running: accepted/s, persisted clicks/s,
      pipeline lag p50/p99 (accepted -> row committed)
and with --replicas N or --brokers 3:
  (d) the same offered rate and time as (c) against N web processes (sharing the port, SO_REUSEPORT) and
      N click workers, on a Kafka cluster of three nodes (replication 3, min.insync.replicas 2) with
      --brokers 3: accepted/s, persisted clicks/s and their ratio to (c), CPU per process kind. On two
      cores this measures the cost of the replicas and of replication, not a speed-up: offer more than
      (c) persists (e.g. --rate 8000) to see it.
and then checks that no click answered 200 "success": true is missing from click_events, and that every
link's click counter equals its rows. With --breakdown-cost, then:
  (e) what the dimensional rollup costs the click worker (issue 20): four rounds, off, on, on, off (so a
      drift over time weighs on both sides alike): the ingress accepts --cost-clicks clicks while no
      worker runs (50 pages, 10 referrer hosts and none, 5 user agents), then a click worker drains them
      with ROLLUP_BREAKDOWN=off (no program_daily_breakdown writes) or on: rows/s of each drain, and the
      ratio on/off (the target: at least 0.9, at most 10% fewer clicks persisted per second).
With --bot-share <pct> (issue 31), after (c):
  (f) a mixed run on a program of its own: --cost-clicks clicks, <pct>% of them from real crawlers and
      link-preview fetchers (Googlebot, Slackbot, WhatsApp, facebookexternalhit, ...; three in four) or a
      browser's prefetch (a person's user agent with Sec-Purpose: prefetch or Purpose: prefetch; one in
      four). Prints the bots sent (accepted answers), the rows stored by quality (human, bot, prefetch),
      and the program's link counters, partner-program clicks, daily stats and daily breakdown by link.
      FAILS the run (exit 1) when the filtered rows (bot + prefetch) differ from the bots sent, a
      quality's rows from what was sent of it, or any counter or rollup from the human rows.
With --classifier-cost (issue 31), last:
  (g) what the ingress's click classifier (bots, link previews, prefetches) costs the click path: four
      rounds, CLICK_CLASSIFIER off, on, on, off, each with a fresh web process and click worker, a
      warm-up, then --cost-clicks clicks as fast as the ingress takes them, the worker running: browser
      user agents (9 real Chrome/Safari/Firefox/Edge/Samsung/mobile ones) and 5% never seen before (the
      classifier cache's misses). Prints each round's ingress accepted/s and end-to-end persisted/s (run
      start until all are rows), and the ratios on/off beside the target (at least 0.95: the classifier
      costs at most 5%); a miss is printed, never fails the run.

A fresh embedded PostgreSQL and Kafka broker are started in .stack/bench/ (deleted afterwards unless
--keep); DATABASE_URL / KAFKA_BROKERS point it at external servers instead. Takes about 3-4 minutes.
Exit status: 0, or 1 when a click was lost, (f) found a discrepancy, or the run failed; performance misses
do not fail it.

Options:
  --rate <n>           offered clicks/s in (c) (default 6000)
  --seconds <n>        duration of (c) in seconds (default 60)
  --load-seconds <n>   measured duration of (a) and (b) in seconds, after a warm-up (default 10)
  --connections <n>    HTTP connections (default 50; pipelining 1)
  --fast               Postgres with fsync/synchronous_commit/full_page_writes off (default: durable)
  --breakdown-cost     also measure (e), the breakdown rollup's cost (ROLLUP_BREAKDOWN off against on)
  --cost-clicks <n>    clicks per (e) and (g) round, and of (f) (default 60000)
  --bot-share <pct>    run (f) with pct% (1-100) bots and prefetches (default 0: no (f))
  --classifier-cost    also measure (g), the click classifier's cost (CLICK_CLASSIFIER off against on)
  --replicas <n>       run (d) with n web processes and n click workers (default 1)
  --brokers <n>        1 (default) or 3: run (d) on a three-node Kafka cluster
  --keep               keep .stack/bench/ afterwards
  -h, --help           this text

Environment: the services' tuning variables pass through, e.g. WORKER_CHUNK_SIZE,
WORKER_PARTITIONS_CONCURRENCY, PRODUCER_LINGER_MS, PRODUCER_MAX_BATCH, KAFKA_CLICK_PARTITIONS,
DATABASE_POOL_SIZE (see shared/config.ts).`;
