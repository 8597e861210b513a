// The one parser of ids in paths, query strings and bodies. It imports nothing, so that every API file
// (the auth rules included) can use it without a cycle.

/** A positive integer from a path or query string (or a JSON number), else null. */
export function parseId(v: unknown): number | null {
  if (typeof v === 'number') return Number.isSafeInteger(v) && v > 0 ? v : null;
  if (typeof v !== 'string' || !/^[0-9]{1,15}$/.test(v)) return null;
  const n = Number(v);
  return n > 0 ? n : null;
}
