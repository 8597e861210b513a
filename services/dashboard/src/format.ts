// Numbers, money and instants as the viewer reads them (their locale and timezone).

/** Cents in the program's currency, in the viewer's locale. */
export function money(cents: number, currency: string): string {
  return new Intl.NumberFormat(undefined, { style: 'currency', currency }).format(cents / 100);
}

/** An instant in the viewer's timezone. */
export function dateTime(iso: string | null | undefined): string {
  if (!iso) return '—';
  return new Date(iso).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}

/** A whole number in the viewer's locale. */
export function num(n: number): string {
  return new Intl.NumberFormat().format(n);
}
