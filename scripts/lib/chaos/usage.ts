// The --help text of `npm run chaos` (scripts/chaos.ts): what it starts, the faults of each mode, the
// targets, the options.
export const CHAOS_USAGE = `Usage: npm run chaos [-- options]

Starts its own throwaway PostgreSQL and Kafka (under .stack/chaos-<pid>, removed at the end) and every
service process, runs a mixed load (clicks with event_ids, leads, sales, refunds; --concurrency loops) and
applies faults one at a time:
  kill -9 of each process type (restarted at once, as an orchestrator would), Kafka broker kill -9 and
  restart, Postgres stop and start, every Postgres backend terminated, SIGTERM of each process type.
Each fault is held for a moment, then recovered; the next one starts once every kind of request was
answered 200 again after the recovery (or after --settle-max seconds). Prints one line per fault:
  first fail   time from the fault to the first failed answer
  failures     how they looked (kind, status or error, count) and their durations p50/max
  first 200    time from the recovery (process ready, broker/Postgres listening) to the first 200 of the
               kind that came back last
  lost, dup    requests answered 200 whose effect is not stored / effects stored more than once
  exits        processes that exited without being the one hit
and whether the targets hold (failures answered within 2.5 s, first 200 within 2 s of recovery, nothing
lost or duplicated, no other exit). About 5 minutes; --short runs five faults in about 1.5 minutes.

With --cluster it starts three Kafka nodes (each broker and controller; every topic replicated three
times, min.insync.replicas 2) and two processes of web and of every worker (web's share the port), and
applies the faults a cluster is for:
  leader-kill       kill -9 of the broker that leads the most click partitions, restarted after --hold s
  controller-kill   kill -9 of the active controller (the quorum's leader), restarted after --hold s
  rolling-restart   SIGTERM of each broker in turn, restarted; the next once every replica is in sync
  kill-replicas     kill -9 of one process of every worker and one web process, restarted once every
                    partition has a live owner again
and prints a second table: while a broker was down, the requests answered 200 (target: 99 %) and the
slowest answer (target: 2.5 s); after kill-replicas, how long each worker's partitions waited for the
surviving process (target: the session timeout, KAFKA_SESSION_TIMEOUT_MS); and whether the partners'
balances equal their ledger entries. About 7 minutes on a quiet machine (--short: leader-kill and
kill-replicas, about 3).

Exit status: 1 when anything answered 200 was lost or duplicated, a balance differs from its ledger, a
process exited that no fault hit, or a SIGTERM did not end in exit 0; the time targets are printed
(MISSED) but fail the run only with --strict, since they depend on the machine (CI runs --short without
--strict). 2: the harness failed.

With --supervised the processes are started by \`npm start\`'s own script (scripts/start.ts, on a
throwaway data directory) and its supervisor, and the harness restarts nothing: the faults are kill -9 of
each service, of the Kafka broker (broker-kill; with --cluster the leader or the controller node), of the
Postgres postmaster (pg-kill) and of MailDev (maildev-kill), and SIGTERM of each service; a fault is over
when the supervisor has brought its process back (its /status shows it up in a new process, a service's
/readyz answers 200). The targets and the accounting are the same. CI runs --supervised --short, with
one Kafka node and with --cluster.

Options:
  --short              kill -9 click worker and web, broker kill -9, Postgres stop/start, SIGTERM of the
                       attribution worker (with --cluster: leader-kill and kill-replicas; with
                       --supervised: pg-kill instead of pg-stop, and with both: leader-kill, pg-kill,
                       kill-replicas)
  --supervised         start everything through scripts/start.ts; its supervisor restarts what a fault hit
  --faults <a,b,...>   only these faults (names as printed, e.g. kill-web,broker-kill,pg-stop)
  --cluster            three Kafka nodes, two processes of everything, the cluster faults (above)
  --replicas <n>       processes of web and of each worker (default 1; 2 with --cluster)
  --hold <s>           with --cluster: how long a killed broker stays down (default 10)
  --concurrency <n>    load loops (default 8; 4 with --cluster: eight saturate two cores running three
                       Kafka nodes and 20 processes, docs/scaling.md)
  --settle-max <s>     longest wait for recovery after a fault, seconds (default 45)
  --strict             a missed time target fails the run too
  --trace <file>       write every attempt, progress line and service log line (JSON lines, ms since
                       start) to <file>, to see when failures happened relative to a fault
  -h, --help`;
