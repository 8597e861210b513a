// A program's groups of partners (GET …/groups, the default first), which the Groups page, its tier ladder and
// the Partners page's group picker all read.
import { api } from './api.ts';
import type { Answer } from './api.ts';
import { useLoad } from './hooks.ts';

export type Group = Answer<'get', '/api/advertiser/affiliate-programs/{id}/groups'>['data'][number];

export function useGroups(programId: number, deps: unknown[] = []) {
  return useLoad(
    async () =>
      (
        await api.GET('/api/advertiser/affiliate-programs/{id}/groups', {
          params: { path: { id: programId } },
        })
      ).data,
    [programId, ...deps],
  );
}
