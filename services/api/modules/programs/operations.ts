// The program write that takes more than one statement, in one transaction (the unit-of-work rule:
// docs/architecture.md); its SQL is dal.ts's.
import type { Sql } from '../../../../shared/db/sql.ts';
import * as dal from './dal.ts';
import type { ProgramFields, ProgramRow } from './dal.ts';

/**
 * Changes the fields given; undefined when the program is gone, 'currency-locked' when the currency would
 * change on a program that has partners or sales (amounts in two currencies would be added: its rollups,
 * its partners' balances). Throws the unique violation on slug.
 */
export function updateProgram(
  sql: Sql,
  id: number,
  f: ProgramFields,
): Promise<ProgramRow | 'currency-locked' | undefined> {
  return sql.begin(async (tx) => {
    // The row lock first: a partner joining waits, or has committed and is seen by the check below, which
    // runs after the lock in a new snapshot.
    const currency = await dal.lockCurrency(tx, id);
    if (currency === undefined) return undefined;
    if (f.currency !== undefined && f.currency !== currency && (await dal.hasPartnersOrSales(tx, id))) {
      return 'currency-locked';
    }
    return dal.updateProgramRow(tx, id, f);
  });
}
