// svc status, events, performance (the dashboard's reads of one program: `svc events <programId>`) and
// svc test click|lead|sale (the tracking routes in test mode: no token, nothing real touched).
import { anonymous, api, arg, given, idArg, int, o, show, table } from '../context.ts';
import type { Commands } from '../context.ts';
import type { RequestBody } from '../../../shared/http/client.ts';
import type { paths } from '../../../sdk/typescript/src/openapi.ts';

/** The program of the second argument. */
const program = () => ({ path: { programId: idArg(1, 'program id') } });

/** additional_data of a test event for the program of the third argument. */
const testMode = () => ({ test_mode: true, program_id: int(arg(2, 'program id'), 'program id') });

type Sale = RequestBody<paths, 'post', '/api/v1/track/sale'>;
/** A test sale: its transaction_id may be left out (the route mints one in test mode, its description says). */
type TestSale = Omit<Sale, 'transaction_id'> & { transaction_id?: string };

export const trackingCommands: Commands = {
  status: async () => show(await api.GET('/api/tracking/status/{programId}', { params: program() })),
  events: async () =>
    show(
      await api.GET('/api/tracking/events/{programId}', {
        params: {
          ...program(),
          query: {
            eventType: given(o.type),
            page: given(o.page),
            pageSize: given(o['page-size']),
            dateFrom: o.from,
            dateTo: o.to,
          },
        },
      }),
      ['event_type', 'timestamp', 'id', 'click_id', 'amount_cents', 'geo_country', 'device_type'],
    ),
  async performance() {
    const r = await api.GET('/api/tracking/performance/{programId}', {
      params: { ...program(), query: { period: given(o.period), dateFrom: o.from, dateTo: o.to } },
    });
    if (o.json) return show(r);
    process.stdout.write(
      table(r.data, ['date', 'clicks', 'leads', 'conversions', 'revenue', 'partners', 'commission']) + '\n\n',
    );
    const m = Object.entries(r.metrics).filter(([, v]) => typeof v !== 'object');
    return show(
      { data: Object.fromEntries(m) },
      m.map(([k]) => k),
    );
  },

  'test click': async () =>
    show(
      await anonymous.POST('/api/v1/track/click', {
        body: {
          affiliate_url: `https://example.com/?aff=${o.aff ?? 'svc-cli-test'}`,
          additional_data: testMode(),
        },
      }),
    ),
  'test lead': async () =>
    show(
      await anonymous.POST('/api/v1/track/lead', {
        body: { customer_key: o['customer-key'] ?? 'svc-cli-test', additional_data: testMode() },
      }),
    ),
  'test sale': async () =>
    show(
      await anonymous.POST('/api/v1/track/sale', {
        body: {
          amount_cents: o['amount-cents'] ? int(o['amount-cents'], '--amount-cents') : 1000,
          additional_data: testMode(),
        } satisfies TestSale as Sale,
      }),
    ),
};
