// svc payouts (docs/payouts.md): preview, create, list, show, the export files, mark paid, cancel.
import { writeFile } from 'node:fs/promises';
import { CliError, api, given, idArg, int, list, o, show } from '../context.ts';
import type { Commands } from '../context.ts';
import { program } from './programs.ts';

const PAYOUT_COLS = [
  'id',
  'partner_id',
  'partner_name',
  'status',
  'amount_cents',
  'currency',
  'commissions_cents',
  'recovered_cents',
  'method',
  'reference',
  'created_at',
  'paid_at',
];

const payout = () => ({ path: { id: idArg(2, 'payout id') } });

/** Payouts (or preview rows) with a `method` column: the payout method's type, `none` without one. */
function withMethod(result: unknown): unknown {
  if (o.json) return result;
  const r = result as { data: unknown };
  const add = (p: Record<string, unknown>) => ({
    ...p,
    method: (p.payout_method as { type?: string } | null)?.type ?? 'none',
  });
  return {
    ...r,
    data: Array.isArray(r.data) ? r.data.map(add) : add(r.data as Record<string, unknown>),
  };
}

/** `svc payouts export`: the CSV file as the API made it, to --out or stdout. */
async function exportPayouts(): Promise<void> {
  if (!o.format) throw new CliError('missing --format csv|paypal|wise; see svc --help');
  const { data: text, response } = await api.raw.GET(
    '/api/advertiser/affiliate-programs/{id}/payouts/export',
    {
      params: { ...program(), query: { format: given(o.format), status: given(o.status) } },
      parseAs: 'text',
    },
  );
  const leftOut = Number(response.headers.get('x-payouts-left-out') ?? 0);
  // PayPal and Wise files leave out payouts of 0 and partners without a method of that kind: say so on
  // stderr, so that stdout stays the file itself.
  const note =
    leftOut > 0
      ? `${leftOut} payout(s) left out of the ${o.format} file: no ${o.format} payout method, or nothing to send\n`
      : '';
  if (o.out) {
    await writeFile(o.out, text ?? '');
    process.stdout.write(`wrote ${o.out}\n`);
  } else {
    process.stdout.write(text ?? '');
  }
  process.stderr.write(note);
}

export const payoutCommands: Commands = {
  async 'payouts preview'() {
    const r = await api.GET('/api/advertiser/affiliate-programs/{id}/payouts/preview', {
      params: { ...program(), query: { partner_id: given(o.partner) } },
    });
    if (o.json) return show(r);
    show(withMethod(r), [
      'partner_id',
      'partner_name',
      'amount_cents',
      'currency',
      'commissions_cents',
      'recovered_cents',
      'method',
      'has_payout_method',
      'below_minimum',
    ]);
    process.stdout.write(
      `total ${r.meta.total_cents} cents ${r.meta.currency} (minimum per payout ${r.meta.min_payout_cents})\n`,
    );
  },
  'payouts create': async () =>
    show(
      withMethod(
        await api.POST('/api/advertiser/affiliate-programs/{id}/payouts', {
          params: program(),
          body: { partner_ids: list(o.partner)?.map((p) => int(p, '--partner')) },
        }),
      ),
      PAYOUT_COLS,
    ),
  'payouts list': async () =>
    show(
      withMethod(
        await api.GET('/api/advertiser/affiliate-programs/{id}/payouts', {
          params: {
            ...program(),
            query: { status: given(o.status), limit: given(o.limit), offset: given(o.offset) },
          },
        }),
      ),
      PAYOUT_COLS,
    ),
  'payouts show': async () =>
    show(withMethod(await api.GET('/api/advertiser/payouts/{id}', { params: payout() })), [
      ...PAYOUT_COLS,
      'commission_ids',
    ]),
  'payouts export': exportPayouts,
  'payouts mark-paid': async () =>
    show(
      withMethod(
        await api.POST('/api/advertiser/payouts/{id}/mark-paid', {
          params: payout(),
          body: { reference: o.reference },
        }),
      ),
      PAYOUT_COLS,
    ),
  'payouts cancel': async () =>
    show(withMethod(await api.POST('/api/advertiser/payouts/{id}/cancel', { params: payout() })), [
      ...PAYOUT_COLS,
      'canceled_at',
    ]),
};
