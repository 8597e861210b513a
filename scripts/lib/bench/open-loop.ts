// An open-loop load at a constant arrival rate, for latency at a fixed offered rate. Request i is due at
// start + i / rate whatever the answers before it did, and its latency counts from that due time (so a
// stalled server is charged for the requests it kept waiting: no coordinated omission). autocannon's
// overallRate releases each second's quota at once, which queues the requests behind each other on the
// connections: it measured a p99 of 60 ms for a bare route at 1,000/s on a machine where this measures 1 ms.
import { Agent, request } from 'node:http';
import { performance } from 'node:perf_hooks';
import { latencySummary } from './bench.ts';

export interface OpenLoopRequest {
  /** Recorded with its answer's status in `codes` (by id). */
  id: string;
  method?: string;
  path: string;
  headers: Record<string, string>;
  body: string;
}

export interface OpenLoopOptions {
  /** The server, e.g. http://127.0.0.1:8080 (the path comes from each request). */
  origin: string;
  rate: number;
  seconds: number;
  /** At most this many requests in flight (keep-alive connections); further due ones wait for one. */
  connections: number;
  next: () => OpenLoopRequest;
  /**
   * Seconds sent at the same rate before `seconds` and not counted in the latencies (a fresh process's
   * first requests also pay for its JIT, connection pools and metadata); their answers are in `codes`.
   */
  warmupSeconds?: number;
  timeoutMs?: number;
}

export interface OpenLoopResult {
  sent: number;
  /** Answered with any status (errors and timeouts are not answers). */
  answered: number;
  errors: number;
  /** Answers per second over the measured part (its first due time to the last answer). */
  achieved: number;
  /** Milliseconds from due time to answer, of the answered requests of the measured part. */
  p50: number;
  p99: number;
  max: number;
  /** Status per request id; 0 for a network error or timeout. */
  codes: Map<string, number>;
}

export async function openLoop(opts: OpenLoopOptions): Promise<OpenLoopResult> {
  const url = new URL(opts.origin);
  const agent = new Agent({ keepAlive: true, maxSockets: opts.connections });
  const warmup = Math.round(opts.rate * (opts.warmupSeconds ?? 0));
  const total = warmup + Math.round(opts.rate * opts.seconds);
  const interval = 1000 / opts.rate;
  const latencies: number[] = [];
  const codes = new Map<string, number>();
  let errors = 0;
  let pending = 0;
  let lastAnswer = 0;
  let allDone: () => void = () => {};
  const finished = new Promise<void>((res) => (allDone = res));
  let scheduled = 0;

  const send = (i: number, due: number) => {
    const measured = i >= warmup;
    const r = opts.next();
    pending++;
    const done = (status: number) => {
      codes.set(r.id, status);
      const now = performance.now();
      // A warm-up request's answer is recorded (codes), not its latency.
      if (measured && status > 0) {
        latencies.push(now - due);
        lastAnswer = now;
      } else if (measured) errors++;
      if (--pending === 0 && scheduled === total) allDone();
    };
    const req = request(
      {
        agent,
        host: url.hostname,
        port: url.port,
        method: r.method ?? 'POST',
        path: r.path,
        headers: { ...r.headers, 'content-length': Buffer.byteLength(r.body) },
        timeout: opts.timeoutMs ?? 15_000,
      },
      (res) => {
        res.resume();
        res.once('end', () => done(res.statusCode ?? 0));
        res.once('error', () => done(0));
      },
    );
    let failed = false;
    const fail = () => {
      if (failed) return;
      failed = true;
      done(0);
    };
    req.once('timeout', () => req.destroy(new Error('timeout')));
    req.once('error', fail);
    req.end(r.body);
  };

  const start = performance.now();
  while (scheduled < total) {
    const now = performance.now();
    while (scheduled < total && start + scheduled * interval <= now) {
      send(scheduled, start + scheduled * interval);
      scheduled++;
    }
    if (scheduled < total) {
      const wait = start + scheduled * interval - performance.now();
      await new Promise((res) => setTimeout(res, Math.max(0, wait)));
    }
  }
  if (pending > 0) await finished;
  agent.destroy();
  const answered = latencies.length;
  return {
    ...latencySummary(latencies),
    sent: total - warmup,
    answered,
    errors,
    achieved: answered / Math.max(0.001, (lastAnswer - start - warmup * interval) / 1000),
    codes,
  };
}
