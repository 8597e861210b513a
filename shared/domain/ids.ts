// Identifiers minted without coordination per request.
//
// Event ids are 63-bit snowflakes: 41 bits of milliseconds since 2025-01-01 UTC (good until 2094),
// 12 bits of node id, 10 bits of per-millisecond sequence. The node id comes from a Postgres sequence
// once at process start (the only coordination), so two live processes never share one unless 4,096
// processes started in between. Ids are time-ordered, which suits the time-partitioned event tables.
//
// A click id is `cust_<partnerProgramId>_<snowflake>`: the spec's `cust_<number>_<number>`. Carrying the
// partner-program lets the ingress decide whether an `existing_click_id` belongs to the same program and
// partner without a database read, and without racing the pipeline that is still writing that customer.

export const EPOCH_MS = Date.UTC(2025, 0, 1);
const NODE_BITS = 12n;
const SEQ_BITS = 10n;
export const MAX_NODE = (1 << Number(NODE_BITS)) - 1;
const MAX_SEQ = (1 << Number(SEQ_BITS)) - 1;

export class Snowflake {
  readonly node: number;
  private lastMs = -1;
  private seq = 0;
  private readonly now: () => number;

  constructor(node: number, now: () => number = Date.now) {
    if (!Number.isInteger(node) || node < 0 || node > MAX_NODE)
      throw new RangeError(`node must be 0..${MAX_NODE}`);
    this.node = node;
    this.now = now;
  }

  /** Next id and the millisecond it encodes (the event's timestamp). */
  next(): { id: bigint; ms: number } {
    let ms = this.now();
    if (ms < this.lastMs) ms = this.lastMs; // clock stepped back: stay monotonic
    if (ms === this.lastMs) {
      this.seq++;
      if (this.seq > MAX_SEQ) {
        // 1,024 ids in one millisecond: borrow the next millisecond rather than spin.
        ms = this.lastMs + 1;
        this.seq = 0;
      }
    } else {
      this.seq = 0;
    }
    this.lastMs = ms;
    const id =
      (BigInt(ms - EPOCH_MS) << (NODE_BITS + SEQ_BITS)) | (BigInt(this.node) << SEQ_BITS) | BigInt(this.seq);
    return { id, ms };
  }
}

/**
 * Click numbers derived from a client's event_id (services/ingress/click-message.ts eventClickNumber) carry
 * this bit, so that a sale naming one can tell it apart from a minted snowflake: it has no time in it.
 * Snowflakes stay below it until their 41 bits of time pass 2^40 ms after the epoch (2059); from then on a
 * snowflake would read as derived, which only changes how long a sale waits for its click (see
 * isRecentClick in the sale applier).
 */
export const EVENT_DERIVED_BIT = 1n << 62n;

export function isEventDerived(n: bigint): boolean {
  return n >= EVENT_DERIVED_BIT;
}

export function snowflakeTime(id: bigint): number {
  return Number(id >> (NODE_BITS + SEQ_BITS)) + EPOCH_MS;
}

const CLICK_ID_RE = /^cust_([1-9][0-9]{0,17})_([1-9][0-9]{0,18})$/;

export function formatClickId(partnerProgramId: number | string, id: bigint): string {
  return `cust_${partnerProgramId}_${id}`;
}

/** Parses a click id; null when it is not of our shape. */
export function parseClickId(value: unknown): { partnerProgramId: string; id: string } | null {
  if (typeof value !== 'string') return null;
  const m = CLICK_ID_RE.exec(value);
  if (!m) return null;
  return { partnerProgramId: m[1]!, id: m[2]! };
}

/** A row id as messages carry it: a positive safe integer. */
export function isId(v: unknown): v is number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v > 0;
}
