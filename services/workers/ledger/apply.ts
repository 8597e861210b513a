// The ledger worker's step: one transaction per chunk of ledger effects (shared/ledger/dal.ts does the work).
import type { Sql } from '../../../shared/db/sql.ts';
import type { LedgerEffect } from '../../../shared/contracts/commands.ts';
import { applyLedgerEntries } from '../../../shared/ledger/dal.ts';
import type { ApplyLedgerResult } from '../../../shared/ledger/dal.ts';

export function createApplyLedgerStep(deps: { sql: Sql }) {
  const { sql } = deps;

  return async function applyLedger(effects: LedgerEffect[]): Promise<ApplyLedgerResult> {
    if (effects.length === 0) return { applied: 0, duplicates: 0 };
    return sql.begin((tx) => applyLedgerEntries(tx, effects));
  };
}
