// CSV as RFC 4180 reads it: comma-separated, CRLF line ends, a field quoted when it holds a comma, a quote,
// a line break or leading/trailing spaces, quotes doubled inside. A field that a spreadsheet would run as
// a formula (starting with =, +, -, @, tab or CR) is prefixed with a single quote, as OWASP advises for
// CSV injection; numbers are written as they are, so negative amounts stay numbers.
export type CsvValue = string | number | null | undefined;

const FORMULA = /^[=+\-@\t\r]/;

export function csvField(v: CsvValue): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'number') return Number.isFinite(v) ? String(v) : '';
  let s = v;
  if (FORMULA.test(s)) s = `'${s}`;
  if (/[",\r\n]/.test(s) || s !== s.trim()) return `"${s.replace(/"/g, '""')}"`;
  return s;
}

/** One line per row, each ending with CRLF (no header row: PayPal's payout file has none). */
export function csvLines(rows: readonly (readonly CsvValue[])[]): string {
  return rows.map((r) => r.map(csvField).join(',') + '\r\n').join('');
}

/** The header row, then one line per row; ends with CRLF. */
export function toCsv(header: readonly string[], rows: readonly (readonly CsvValue[])[]): string {
  return csvLines([header, ...rows]);
}
