// The payout files (docs/payouts.md "Exports", NOTES "PayPal Payouts bulk CSV" and "Wise batch payments
// CSV"), pure: a list of payouts in, CSV text out.
//
// - `paypal`: PayPal Payouts' bulk upload, no header row, one line per payout with a PayPal method:
//   recipient email, amount, currency, reference id (≤ 30 characters, no spaces), note (≤ 400), wallet.
// - `wise`: Wise batch payments by email, header row `name,recipientEmail,paymentReference,receiverType,
//   amountCurrency,amount,sourceCurrency,targetCurrency`, one line per payout with a Wise method.
// - `csv`: every payout, with the partner's method and a `no payout method` flag, for bank transfers, other
//   tools and the advertiser's books.
// A payout of 0 (a clawback recovered all of it) sends nothing and is left out of the PayPal and Wise files.
import { csvLines, toCsv } from '../../../../shared/csv.ts';
import type { ExportFormat, Payout } from './service.ts';

export const NO_PAYOUT_METHOD = 'no payout method';
/** PayPal takes at most 5,000 payments per file, Wise 1,000 (NOTES). */
export const MAX_ROWS: Record<Exclude<ExportFormat, 'csv'>, number> = { paypal: 5000, wise: 1000 };

export const WISE_HEADER = [
  'name',
  'recipientEmail',
  'paymentReference',
  'receiverType',
  'amountCurrency',
  'amount',
  'sourceCurrency',
  'targetCurrency',
] as const;

export const CSV_HEADER = [
  'payout_id',
  'status',
  'partner_id',
  'partner_name',
  'partner_email',
  'payout_method',
  'payout_email',
  'payout_details',
  'amount',
  'amount_cents',
  'currency',
  'commissions_cents',
  'recovered_cents',
  'commission_count',
  'created_at',
  'paid_at',
  'reference',
  'flag',
] as const;

/** Cents as the unit with two decimals, in integer arithmetic: 10050 → "100.50". */
export function decimalAmount(cents: number): string {
  const sign = cents < 0 ? '-' : '';
  const abs = Math.abs(cents);
  return `${sign}${Math.trunc(abs / 100)}.${String(abs % 100).padStart(2, '0')}`;
}

/** The email a PayPal or Wise payment goes to: the method's own, else none (the partner record's is not used). */
function methodEmail(p: Payout, type: 'paypal' | 'wise'): string | null {
  return p.payout_method?.type === type ? (p.payout_method.email ?? null) : null;
}

/** Whether the payout can be paid at all: a method, and for PayPal and Wise the email it needs. */
export function hasPayoutMethod(p: Pick<Payout, 'payout_method'>): boolean {
  const m = p.payout_method;
  if (m === null) return false;
  return m.type === 'bank_transfer' || (m.email ?? null) !== null;
}

/** What the method's `details` say of the target currency (an ISO code), if anything. */
function targetCurrency(p: Payout): string {
  const d = p.payout_method?.details;
  if (typeof d === 'object' && d !== null && !Array.isArray(d)) {
    const c = (d as Record<string, unknown>).currency;
    if (typeof c === 'string' && /^[A-Za-z]{3}$/.test(c.trim())) return c.trim().toUpperCase();
  }
  return p.currency;
}

/** Wise wants PERSON or BUSINESS; `details.receiver_type` may say BUSINESS. */
function receiverType(p: Payout): 'PERSON' | 'BUSINESS' {
  const d = p.payout_method?.details;
  const t = typeof d === 'object' && d !== null ? (d as Record<string, unknown>).receiver_type : undefined;
  return typeof t === 'string' && t.trim().toUpperCase() === 'BUSINESS' ? 'BUSINESS' : 'PERSON';
}

/** A bank transfer's details as the partner wrote them (free text; anything else as JSON). */
function detailsText(d: unknown): string | null {
  if (d === null || d === undefined) return null;
  return typeof d === 'string' ? d : JSON.stringify(d);
}

/** The rows of the file and the payouts it leaves out (no method of that kind, or nothing to send). */
export function exportPayouts(
  format: ExportFormat,
  payouts: readonly Payout[],
  programName: string,
): { body: string; rows: number; left_out: number } {
  if (format === 'csv') {
    const rows = payouts.map((p) => [
      p.id,
      p.status,
      p.partner_id,
      p.partner_name,
      p.partner_email,
      p.payout_method?.type ?? null,
      p.payout_method?.email ?? null,
      detailsText(p.payout_method?.details),
      decimalAmount(p.amount_cents),
      p.amount_cents,
      p.currency,
      p.commissions_cents,
      p.recovered_cents,
      p.commission_ids.length,
      p.created_at,
      p.paid_at,
      p.reference,
      hasPayoutMethod(p) ? null : NO_PAYOUT_METHOD,
    ]);
    return { body: toCsv(CSV_HEADER, rows), rows: rows.length, left_out: 0 };
  }
  const payable = payouts.filter((p) => p.amount_cents > 0 && methodEmail(p, format) !== null);
  const left_out = payouts.length - payable.length;
  if (format === 'paypal') {
    const note = `Affiliate payout: ${programName}`.slice(0, 400);
    const rows = payable.map((p) => [
      methodEmail(p, 'paypal'),
      decimalAmount(p.amount_cents),
      p.currency,
      `payout-${p.id}`,
      note,
      'PAYPAL',
    ]);
    return { body: csvLines(rows), rows: rows.length, left_out };
  }
  const rows = payable.map((p) => [
    p.partner_name,
    methodEmail(p, 'wise'),
    `Payout ${p.id}`,
    receiverType(p),
    p.currency,
    decimalAmount(p.amount_cents),
    p.currency,
    targetCurrency(p),
  ]);
  return { body: toCsv(WISE_HEADER, rows), rows: rows.length, left_out };
}
