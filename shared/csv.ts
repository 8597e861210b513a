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

/**
 * Rows of a CSV text as RFC 4180 reads it (what spreadsheets export): fields separated by commas, a quoted
 * field may hold commas, line breaks and doubled quotes; CRLF or LF line ends; a leading byte-order mark
 * is dropped; a last empty line is no row. A quote inside an unquoted field is kept as it is.
 */
export function parseCsv(text: string): string[][] {
  const s = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  let i = 0;
  const endField = () => {
    row.push(field);
    field = '';
  };
  const endRow = () => {
    endField();
    rows.push(row);
    row = [];
  };
  while (i < s.length) {
    const c = s[i]!;
    if (quoted) {
      if (c === '"') {
        if (s[i + 1] === '"') {
          field += '"';
          i += 2;
          continue;
        }
        quoted = false;
        i++;
        continue;
      }
      field += c;
      i++;
      continue;
    }
    if (c === '"' && field === '') {
      quoted = true;
      i++;
    } else if (c === ',') {
      endField();
      i++;
    } else if (c === '\r' && s[i + 1] === '\n') {
      endRow();
      i += 2;
    } else if (c === '\n' || c === '\r') {
      endRow();
      i++;
    } else {
      field += c;
      i++;
    }
  }
  if (field !== '' || row.length > 0) endRow();
  return rows;
}
