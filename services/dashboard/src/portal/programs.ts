// The signed-in partner's programs (GET /api/partner/programs: one partner record each, possibly in
// several workspaces), which most portal pages read, and the terms of a program as a partner (or an
// applicant, on the public page) sees them.
import { api } from '../api.ts';
import type { Answer } from '../api.ts';
import { useLoad } from '../hooks.ts';

type Row = Answer<'get', '/api/partner/programs'>['data'][number];

/** One row: the partner record in one program, its status and what it is owed. */
export type PartnerProgram = Row;

export type PartnerStatus = PartnerProgram['status'];

/** What the Terms list shows: the partner's programs and the public page both answer these fields. */
export type ProgramTerms = Pick<
  PartnerProgram['program'],
  'currency' | 'cookie_window_days' | 'commission' | 'hold_days' | 'min_payout_cents'
>;

export function usePartnerPrograms(deps: unknown[] = []) {
  return useLoad(async () => (await api.GET('/api/partner/programs')).data, deps);
}
