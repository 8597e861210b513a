// svc programs, partners, links, commissions: a program and what hangs off it (the program id is the
// third argument: `svc partners list <programId>`).
import { api, arg, given, idArg, int, list, o, show, workspace } from '../context.ts';
import type { Commands } from '../context.ts';
import type { RequestBody } from '../../../shared/http/client.ts';
import type { paths } from '../../../sdk/typescript/src/openapi.ts';

type ProgramFields = RequestBody<paths, 'put', '/api/advertiser/affiliate-programs/{id}'>;
type NewProgram = RequestBody<paths, 'post', '/api/advertiser/affiliate-programs'>;

const PROGRAM_COLS = ['id', 'name', 'slug', 'status', 'cookie_window_days', 'currency', 'api_token_masked'];
const PARTNER_COLS = ['id', 'name', 'email', 'status', 'rejection_reason', 'source', 'claimed'];
const LINK_COLS = ['id', 'short_link', 'status', 'clicks', 'last_clicked'];
export const COMMISSION_COLS = [
  'id',
  'status',
  'amount_cents',
  'deducted_cents',
  'currency',
  'sale_id',
  'partner_id',
  'review_reason',
  'payable_at',
  'payout_id',
  'refund_reason',
  'created_at',
];

/** The program of the third argument. */
export const program = () => ({ path: { id: idArg(2, 'program id') } });
/** The program's partner of the fourth argument. */
const partner = () => ({ path: { ...program().path, partnerId: idArg(3, 'partner id') } });
const commission = () => ({ path: { id: idArg(2, 'commission id') } });

/** The program options given (programs create, programs update). */
function programFields(): ProgramFields {
  const f: ProgramFields = {};
  if (o.name) f.name = o.name;
  if (o.slug) f.slug = o.slug;
  if (o['cookie-days']) f.cookie_window_days = int(o['cookie-days'], '--cookie-days');
  if (o.currency) f.currency = o.currency;
  if (o.percent) f.commission = { type: 'percentage', percent: Number(o.percent) };
  if (o['flat-cents']) f.commission = { type: 'flat', amount_cents: int(o['flat-cents'], '--flat-cents') };
  if (o.origins) f.allowed_origins = list(o.origins);
  if (o['hold-days']) f.hold_days = int(o['hold-days'], '--hold-days');
  if (o['min-payout-cents']) f.min_payout_cents = int(o['min-payout-cents'], '--min-payout-cents');
  return f;
}

export const programCommands: Commands = {
  'programs list': async () => show(await api.GET('/api/advertiser/affiliate-programs'), PROGRAM_COLS),
  'programs get': async () =>
    show(await api.GET('/api/advertiser/affiliate-programs/{id}', { params: program() }), [
      ...PROGRAM_COLS,
      'allowed_origins',
      'commission',
    ]),
  'programs create': async () =>
    show(
      await api.POST('/api/advertiser/affiliate-programs', {
        params: { query: workspace() },
        // Without --name: the API says the name is required.
        body: programFields() as NewProgram,
      }),
      [...PROGRAM_COLS, 'api_token'],
    ),
  'programs update': async () =>
    show(
      await api.PUT('/api/advertiser/affiliate-programs/{id}', {
        params: program(),
        body: programFields(),
      }),
      PROGRAM_COLS,
    ),
  'programs delete': async () =>
    show(await api.DELETE('/api/advertiser/affiliate-programs/{id}', { params: program() })),
  'programs go-live': async () =>
    show(
      await api.POST('/api/advertiser/affiliate-programs/{id}/go-live', { params: program() }),
      PROGRAM_COLS,
    ),
  'programs regenerate-token': async () =>
    show(
      await api.POST('/api/advertiser/affiliate-programs/{id}/regenerate-api-token', {
        params: program(),
      }),
      ['api_token', 'api_token_masked'],
    ),

  'partners list': async () =>
    show(await api.GET('/api/advertiser/affiliate-programs/{id}/partners', { params: program() })),
  'partners add': async () =>
    show(
      await api.POST('/api/advertiser/affiliate-programs/{id}/partners', {
        params: program(),
        body: { name: given(o.name), email: given(o.email), status: given(o.status) },
      }),
    ),
  'partners approve': async () =>
    show(
      await api.POST('/api/advertiser/affiliate-programs/{id}/partners/{partnerId}/approve', {
        params: partner(),
      }),
      PARTNER_COLS,
    ),
  'partners reject': async () =>
    show(
      await api.POST('/api/advertiser/affiliate-programs/{id}/partners/{partnerId}/reject', {
        params: partner(),
        body: { reason: o.reason },
      }),
      PARTNER_COLS,
    ),
  'partners invite': async () =>
    show(
      await api.POST('/api/advertiser/affiliate-programs/{id}/partners/{partnerId}/invite', {
        params: partner(),
      }),
      ['invite_url', 'expires_at'],
    ),

  'links list': async () =>
    show(
      await api.GET('/api/advertiser/affiliate-programs/{id}/partners/{partnerId}/links', {
        params: partner(),
      }),
      LINK_COLS,
    ),
  'links create': async () =>
    show(
      await api.POST('/api/advertiser/affiliate-programs/{id}/partners/{partnerId}/links', {
        params: partner(),
        body: { short_link: o['short-link'] },
      }),
      LINK_COLS,
    ),
  'links set': async () =>
    show(
      await api.PUT('/api/advertiser/affiliate-programs/{id}/partners/{partnerId}/links/{linkId}', {
        params: { path: { ...partner().path, linkId: idArg(4, 'link id') } },
        body: { status: given(arg(5, 'active|inactive')) },
      }),
      LINK_COLS,
    ),

  'commissions list': async () =>
    show(
      await api.GET('/api/advertiser/affiliate-programs/{id}/commissions', {
        params: { ...program(), query: { status: given(o.status) } },
      }),
      COMMISSION_COLS,
    ),
  'commissions mark-paid': async () =>
    show(await api.POST('/api/advertiser/commissions/{id}/mark-paid', { params: commission() })),
  'commissions approve': async () =>
    show(
      await api.POST('/api/advertiser/commissions/{id}/approve', { params: commission() }),
      COMMISSION_COLS,
    ),
  'commissions reject': async () =>
    show(
      await api.POST('/api/advertiser/commissions/{id}/reject', {
        params: commission(),
        body: { reason: o.reason },
      }),
      COMMISSION_COLS,
    ),
};
