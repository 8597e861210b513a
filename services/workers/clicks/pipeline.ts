// The click worker's chunk handler: the order of the steps lives here.
//   parse → enrich (user agent, geo) → persist (one transaction) → dead letters → leads (behind their clicks)
// Each step returns an outcome per message (ok or dead-letter); a thrown error means infrastructure, and
// the chunk is retried and redelivered (offsets are committed only after this returns). Why: docs/pipeline.md.
import type { Sql } from '../../../shared/db/sql.ts';
import type { Logger } from '../../../shared/logger.ts';
import type { BatchingProducer, ConsumedMessage } from '../../../shared/pipeline/kafka.ts';
import { parseClickMessage } from '../../../shared/contracts/clicks.ts';
import { applyIsolatingPoison, writeDeadLetters } from '../../../shared/pipeline/dead-letters.ts';
import type { DeadLetter } from '../../../shared/pipeline/dead-letters.ts';
import { deadLetter, ok } from '../../../shared/pipeline/step-outcome.ts';
import type { StepOutcome } from '../../../shared/pipeline/step-outcome.ts';
import type { ClickMessage } from '../../../shared/contracts/clicks.ts';
import type { EnrichedClick } from './steps/enrich-click.ts';
import type { PersistResult } from './steps/persist-clicks.ts';
import { percentile } from '../../../shared/stats.ts';

export interface ClickPipelineDeps {
  /** Applies lead commands (the customer journey), in order, after the chunk's clicks are stored. */
  leads: { handle(messages: ConsumedMessage[]): Promise<void> };
  sql: Sql;
  log: Logger;
  producer: BatchingProducer;
  deadLetterTopic: string;
  enrich: (msg: ClickMessage) => EnrichedClick;
  persist: (clicks: EnrichedClick[]) => Promise<PersistResult>;
}

export interface PipelineStats {
  messages: number;
  inserted: number;
  duplicates: number;
  deadLetters: number;
  /** Sum and samples of (commit time - ingress time), for the status line and the benchmark. */
  lagSamples: number[];
}

export function createClickPipeline(deps: ClickPipelineDeps) {
  const stats: PipelineStats = { messages: 0, inserted: 0, duplicates: 0, deadLetters: 0, lagSamples: [] };

  /** A message the ingress would never send is poison. */
  function parseClick(message: ConsumedMessage): StepOutcome<ClickMessage> {
    const parsed = parseClickMessage(message.value);
    return typeof parsed === 'string' ? deadLetter(parsed) : ok(parsed);
  }

  /** Enrichment is local and pure: whatever it throws is about this message's values. */
  function enrich(click: ClickMessage): StepOutcome<EnrichedClick> {
    try {
      return ok(deps.enrich(click));
    } catch (err) {
      return deadLetter((err as Error).message, err);
    }
  }

  async function handle(messages: ConsumedMessage[]): Promise<void> {
    const dead: DeadLetter[] = [];
    const clicks: { value: EnrichedClick; message: ConsumedMessage }[] = [];
    const leads: ConsumedMessage[] = [];
    for (const message of messages) {
      if (isLead(message.value)) {
        leads.push(message);
        continue;
      }
      const parsed = parseClick(message);
      if (parsed.type !== 'ok') {
        dead.push({ message, step: 'parse', reason: parsed.reason });
        continue;
      }
      const enriched = enrich(parsed.value);
      if (enriched.type !== 'ok') dead.push({ message, step: 'enrich', reason: enriched.reason });
      else clicks.push({ value: enriched.value, message });
    }

    const result = await applyIsolatingPoison(clicks, deps.persist, dead, deps.log, 'persist');
    await writeDeadLetters(deps, dead);
    stats.deadLetters += dead.length;
    // A lead in this chunk may be for a click of this chunk: the clicks are committed first.
    if (leads.length > 0) await deps.leads.handle(leads);

    const now = Date.now();
    stats.messages += messages.length;
    stats.inserted += result.inserted;
    stats.duplicates += result.duplicates;
    for (const c of clicks) if (stats.lagSamples.length < 200_000) stats.lagSamples.push(now - c.value.ts);
  }

  // Throughput and pipeline lag (ingress accept → row committed) since the previous status line.
  let lastMessages = 0;
  function status(): Record<string, unknown> | null {
    const lags = stats.lagSamples.splice(0);
    if (stats.messages === lastMessages) return null;
    const line = {
      messages: stats.messages,
      perSecond: Math.round((stats.messages - lastMessages) / 10),
      inserted: stats.inserted,
      duplicates: stats.duplicates,
      deadLetters: stats.deadLetters,
      lagP50Ms: percentile(lags, 50),
      lagP99Ms: percentile(lags, 99),
    };
    lastMessages = stats.messages;
    return line;
  }

  return { handle, stats, status };
}

const LEAD_PREFIX = Buffer.from('{"v":1,"type":"lead"');
/** Leads share the clicks topic (ordered behind their click); the ingress serialises them with this prefix. */
function isLead(value: Buffer | null): boolean {
  return value !== null && value.subarray(0, LEAD_PREFIX.length).equals(LEAD_PREFIX);
}
