// One page of a source applied (docs/importing.md): its rows in the order they depend on each other
// (groups, partners, links, codes, customers, commissions), in the page's transaction.
import type { Tx } from '../db/sql.ts';
import { applyCodes, applyGroups, applyLinks, applyPartners } from './apply-partners.ts';
import { applyCommissions, applyCustomers } from './apply-sales.ts';
import { PageResult } from './refs.ts';
import type { ImportScope } from './refs.ts';
import type { ImportOptions, Page } from './types.ts';

export async function applyPage(
  tx: Tx,
  s: ImportScope,
  page: Page,
  options: ImportOptions,
): Promise<PageResult> {
  const r = new PageResult();
  for (const { outcome, ...e } of page.errors ?? []) r.error(e, outcome ?? 'failed');
  if (page.groups?.length) await applyGroups(tx, s, r, page.groups);
  if (page.partners?.length) await applyPartners(tx, s, r, page.partners, options);
  if (page.links?.length) await applyLinks(tx, s, r, page.links);
  if (page.codes?.length) await applyCodes(tx, s, r, page.codes);
  if (page.customers?.length) await applyCustomers(tx, s, r, page.customers, true);
  if (page.commissions?.length) await applyCommissions(tx, s, r, page.commissions);
  return r;
}
