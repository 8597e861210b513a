// A spreadsheet (CONTRACT part five): a CSV file with a header row, one partner per row: `email`
// (required), `name`, `link` (a link code they shared), `coupon_code`, `stripe_promotion_code` (the code's
// Stripe promotion code id), `group` (the slug of a group of the program). Other columns are ignored. A row
// is identified by its email (a file imported again finds the same partners); a bad row is an error row and
// the others import. Read 500 rows per command (the cursor is the next row's index). docs/importing.md "CSV".
import { parseCsv } from '../../csv.ts';
import type { Page, RowError, SourceAdapter } from '../types.ts';

export const CSV_COLUMNS = [
  'email',
  'name',
  'link',
  'coupon_code',
  'stripe_promotion_code',
  'group',
] as const;
const PAGE_ROWS = 500;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** The header's problem (the 400 of the upload), or null. */
export function csvHeaderError(text: string): string | null {
  const rows = parseCsv(text.slice(0, 64 * 1024).split(/\r?\n/)[0] ?? '');
  const header = (rows[0] ?? []).map((h) => h.trim().toLowerCase());
  if (!header.includes('email'))
    return `The CSV's first line must be a header naming its columns, one of them email (columns: ${CSV_COLUMNS.join(', ')})`;
  return null;
}

function rowsOf(text: string) {
  const [header = [], ...rows] = parseCsv(text);
  const names = header.map((h) => h.trim().toLowerCase());
  return rows.map(
    (r) => Object.fromEntries(names.map((n, i) => [n, (r[i] ?? '').trim()])) as Record<string, string>,
  );
}

export const csv: SourceAdapter = {
  name: 'csv',
  label: 'The CSV file',
  steps: ['rows'],
  baseUrl: null,
  credentialsError: () => null,
  auth: () => ({ headers: {} }),
  rateLimit: null,
  async fetchPage(ctx, _step, cursor) {
    const all = rowsOf(ctx.csv ?? '');
    const from = cursor === null ? 0 : Number(cursor);
    const errors: RowError[] = [];
    const page: Page = { partners: [], links: [], codes: [], errors, next: null };
    all.slice(from, from + PAGE_ROWS).forEach((r, i) => {
      const line = from + i + 2; // the header is line 1
      if (Object.values(r).every((v) => v === '')) return;
      const email = (r.email ?? '').toLowerCase();
      if (!EMAIL.test(email)) {
        errors.push({
          kind: 'partner',
          external_id: email || `line ${line}`,
          code: 'invalid_email',
          message: `Line ${line}: email ${JSON.stringify(r.email ?? '')} is not an email address`,
        });
        return;
      }
      page.partners!.push({
        external_id: email,
        email,
        name: r.name || email,
        group: r.group ? { slug: r.group } : null,
        active: true,
        status: 'approved',
      });
      if (r.link)
        page.links!.push({ external_id: r.link.toLowerCase(), partner_external_id: email, code: r.link });
      if (r.coupon_code)
        page.codes!.push({
          external_id: r.coupon_code.toLowerCase(),
          partner_external_id: email,
          code: r.coupon_code,
          stripe_id: r.stripe_promotion_code || null,
          archived: false,
        });
    });
    page.next = from + PAGE_ROWS < all.length ? String(from + PAGE_ROWS) : null;
    return page;
  },
};
