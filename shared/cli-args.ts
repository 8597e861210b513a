// The integer rule of the command lines: `svc` (bin/) and the scripts' options (scripts/lib/cli.ts) read a
// number the same way. bin/ imports nothing from scripts/, so the rule lives here.

/** The integer `raw` spells, when it lies in min..max; otherwise null. */
export function integerIn(raw: string | undefined, min: number, max: number): number | null {
  if (raw === undefined || raw.trim() === '') return null;
  const n = Number(raw);
  return Number.isInteger(n) && n >= min && n <= max ? n : null;
}
