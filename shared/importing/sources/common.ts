// Small readers the source adapters share: a field of an unknown JSON object, as the type wanted or null.
// The sources' answers are data from outside: nothing is trusted to have the shape their docs show.
export type Obj = Record<string, unknown>;

export const obj = (v: unknown): Obj =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {};
export const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);
export const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
export const int = (v: unknown): number | null =>
  typeof v === 'number' && Number.isSafeInteger(v) ? v : null;
export const date = (v: unknown): Date | null => {
  if (typeof v !== 'string') return null;
  const d = new Date(v);
  return Number.isNaN(d.getTime()) ? null : d;
};
export const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/** The credentials field `name`: a non-empty string of at most 500 characters, or the error naming it. */
export function secretField(c: unknown, name: string, what: string): string | null {
  const v = obj(c)[name];
  if (typeof v !== 'string' || v.trim() === '' || v.length > 500)
    return `credentials.${name} is required: ${what}`;
  return null;
}

/** A campaign filter: whether the import takes rows of this campaign / group. */
export const selected = (ids: string[] | null, id: string | null): boolean =>
  ids === null || (id !== null && ids.includes(id));
