// JSON values as Postgres can store them: bounded depth, no NUL, well-formed UTF-16.

export const ESCAPED_NUL_OR_SURROGATE = /\\u(?:0000|[dD][89a-fA-F])/;
export const BAD_STRING = Symbol('bad string');

/**
 * How deep a JSON body may nest arrays and objects. Far beyond any real payload (line_items, metadata),
 * and it keeps every recursive walk over a body or a command (ours, JSON.stringify's) far from the stack
 * limit: 3,000 levels of `{"a":` in 18 KB used to overflow the workers' stack.
 */
export const MAX_JSON_DEPTH = 64;

/**
 * Whether JSON text nests arrays/objects deeper than `max` (brackets inside strings do not count).
 * Linear and without recursion; a body with at most `max` opening brackets in all, which is every
 * ordinary one, is answered by two indexOf scans.
 */
export function jsonTooDeep(text: string, max = MAX_JSON_DEPTH): boolean {
  let opens = 0;
  for (let i = text.indexOf('{'); i !== -1 && opens <= max; i = text.indexOf('{', i + 1)) opens++;
  for (let i = text.indexOf('['); i !== -1 && opens <= max; i = text.indexOf('[', i + 1)) opens++;
  if (opens <= max) return false;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // a backslash escapes the next character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) return true;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return false;
}

/**
 * Every string of a parsed JSON value (keys too) without NUL characters, which Postgres text and jsonb
 * cannot hold; BAD_STRING when one is not well-formed UTF-16 (an unpaired surrogate escape such as
 * "\ud800"): stored, it would come back as U+FFFD, a different string than the one a caller matches on
 * (a transaction_id, a customer_key), and jsonb refuses it outright. Recursive: the depth is bounded first.
 */
export function cleanStrings(v: unknown): unknown {
  if (typeof v === 'string') {
    if (!v.isWellFormed()) return BAD_STRING;
    return v.includes('\u0000') ? v.replaceAll('\u0000', '') : v;
  }
  if (Array.isArray(v)) {
    const out: unknown[] = [];
    for (const x of v) {
      const c = cleanStrings(x);
      if (c === BAD_STRING) return BAD_STRING;
      out.push(c);
    }
    return out;
  }
  if (isPlainObject(v)) {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) {
      const key = cleanStrings(k);
      const c = cleanStrings(x);
      if (key === BAD_STRING || c === BAD_STRING) return BAD_STRING;
      // An own property, as JSON.parse makes it: assigning "__proto__" would set the prototype instead.
      Object.defineProperty(out, key as string, {
        value: c,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return out;
  }
  return v;
}

/**
 * Why a message decoded from Kafka cannot be stored as it is, or null: nested deeper than
 * MAX_JSON_DEPTH, or a string (keys too) holding a NUL or an unpaired surrogate. The ingress never sends
 * either; another producer could, and such a message must be dead-lettered, not retried forever.
 * `parse` is only called once the depth is known to be bounded; its result is returned for the caller.
 */
export function unstorableJson(text: string, parse: () => unknown): { reason: string } | { value: unknown } {
  if (jsonTooDeep(text)) return { reason: `nested deeper than ${MAX_JSON_DEPTH} levels` };
  const value = parse();
  if (!ESCAPED_NUL_OR_SURROGATE.test(text)) return { value };
  const bad = (v: unknown): boolean =>
    typeof v === 'string'
      ? v.includes('\u0000') || !v.isWellFormed()
      : typeof v === 'object' && v !== null && Object.entries(v).some(([k, x]) => bad(k) || bad(x));
  return bad(value) ? { reason: 'a string holds a NUL or an unpaired surrogate' } : { value };
}

/**
 * A Kafka message's value as a JSON object we can store, or why it is poison (dead-lettered: retrying
 * would never help): empty, not JSON, unstorable (see unstorableJson), or not an object.
 */
export function decodeMessageObject(bytes: Buffer | null): Record<string, unknown> | string {
  if (!bytes || bytes.length === 0) return 'empty message';
  const text = bytes.toString('utf8');
  let checked: { reason: string } | { value: unknown };
  try {
    checked = unstorableJson(text, () => JSON.parse(text));
  } catch {
    return 'not JSON';
  }
  if ('reason' in checked) return checked.reason;
  return isPlainObject(checked.value) ? checked.value : 'not a JSON object';
}

/** The first `max` UTF-16 units of `s`, without splitting a surrogate pair (half a pair stores as U+FFFD). */
export function truncate(s: string, max: number): string {
  if (s.length <= max) return s;
  const last = s.charCodeAt(max - 1);
  return s.slice(0, last >= 0xd800 && last <= 0xdbff ? max - 1 : max);
}

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
