// The click worker's steps, run by the one chunk runner (shared/pipeline/message-steps.ts):
//   parse → enrich (user agent, geo) → persist (one transaction) → dead letters → leads (behind their clicks)
// Each step returns an outcome per message (ok or dead-letter); a thrown error means infrastructure, and
// the chunk is retried and redelivered (offsets are committed only after it was applied). Leads share the
// clicks topic: the record's `type` header tells them apart (isLeadRecord). Why: docs/pipeline.md.
import type { ConsumedMessage } from '../../../shared/pipeline/kafka.ts';
import { isLeadRecord, parseClickMessage } from '../../../shared/contracts/clicks.ts';
import type { ClickMessage } from '../../../shared/contracts/clicks.ts';
import { deadLetter, ok } from '../../../shared/pipeline/step-outcome.ts';
import type { MessageSteps } from '../../../shared/pipeline/message-steps.ts';
import type { EnrichedClick } from './steps/enrich-click.ts';
import type { PersistResult } from './steps/persist-clicks.ts';
import { percentile } from '../../../shared/stats.ts';

export interface ClickStepsDeps {
  /** Applies lead commands (the customer journey), in order, after the chunk's clicks are stored. */
  leads: { handle(messages: ConsumedMessage[]): Promise<void> };
  enrich: (msg: ClickMessage) => EnrichedClick;
  persist: (clicks: EnrichedClick[]) => Promise<PersistResult>;
}

/** At most this many lag samples between two status lines (the line's percentiles are over them). */
const MAX_LAG_SAMPLES = 200_000;

export function createClickSteps(
  deps: ClickStepsDeps,
): MessageSteps<EnrichedClick, PersistResult, ClickMessage> {
  /** Pipeline lag (ingress accept → row committed) of the clicks stored since the last status line. */
  let lagSamples: number[] = [];

  return {
    /** A message the ingress would never send is poison. */
    parse(message) {
      const parsed = parseClickMessage(message.value);
      return typeof parsed === 'string' ? deadLetter(parsed) : ok(parsed);
    },
    /** Enrichment is local and pure: whatever it throws is about this message's values. */
    enrich(click) {
      try {
        return ok(deps.enrich(click));
      } catch (err) {
        return deadLetter((err as Error).message, err);
      }
    },
    applyStep: 'persist',
    async apply(clicks) {
      const result = await deps.persist(clicks);
      const now = Date.now();
      for (const c of clicks) if (lagSamples.length < MAX_LAG_SAMPLES) lagSamples.push(now - c.ts);
      return result;
    },
    // A lead in a chunk may be for a click of the same chunk: the clicks are committed first.
    divert: {
      matches: (message) => isLeadRecord(message.headers, message.value),
      handle: (messages) => deps.leads.handle(messages),
    },
    // Totals since the start, throughput and pipeline lag since the previous status line (every 10 s).
    status(since, total) {
      const lags = lagSamples;
      lagSamples = [];
      return {
        messages: total.messages,
        perSecond: Math.round((since.messages ?? 0) / 10),
        inserted: total.inserted ?? 0,
        duplicates: total.duplicates ?? 0,
        deadLetters: total.deadLetters ?? 0,
        lagP50Ms: percentile(lags, 50),
        lagP99Ms: percentile(lags, 99),
      };
    },
  };
}
