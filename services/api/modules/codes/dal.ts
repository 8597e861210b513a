// SQL of partner codes: create (unique per program regardless of case: the index partner_codes_program_code),
// list per program or per partner, deactivate.
import type { Sql } from '../../../../shared/db/sql.ts';
import type { Processor } from '../../../../shared/processors/index.ts';

/** A code's discount ids at the processors (docs/codes.md). */
export type ProcessorIds = Partial<Record<Processor, string>>;

export interface CodeRow {
  id: string;
  code: string;
  partner_id: string;
  program_id: string;
  processor_ids: ProcessorIds;
  status: 'active' | 'inactive';
  created_at: Date;
}

const COLUMNS = (sql: Sql) => sql`id, code, partner_id, program_id, processor_ids, status, created_at`;

/** The partner-program of partner `partnerId` in the program, or undefined. */
export async function partnerProgramOf(sql: Sql, programId: number, partnerId: number) {
  const [row] = await sql<{ id: string }[]>`
    select id from partner_programs where program_id = ${programId} and partner_id = ${partnerId}`;
  return row?.id;
}

/**
 * The new code; 'taken' when the program has one of that name in any case (active or not); or which of its
 * processor ids another code of the program has (active or not: the unique indexes of 0024), with that
 * code. The indexes decide (two creations racing cannot both win); the read after is only for the answer.
 */
export async function insertCode(
  sql: Sql,
  c: { programId: number; partnerId: number; ppId: string; code: string; processorIds: ProcessorIds },
): Promise<CodeRow | 'taken' | { processor: string; usedBy: string }> {
  const [row] = await sql<CodeRow[]>`
    insert into partner_codes (program_id, partner_id, partner_program_id, code, processor_ids)
    values (${c.programId}, ${c.partnerId}, ${c.ppId}, ${c.code}, ${sql.json(c.processorIds as never)})
    on conflict do nothing
    returning ${COLUMNS(sql)}`;
  if (row) return row;
  const [other] = await sql<{ code: string; same_name: boolean; processor: string | null }[]>`
    select pc.code, lower(pc.code) = lower(${c.code}) as same_name, (select k from jsonb_each_text(${sql.json(c.processorIds as never)}) as e(k, v)
                     where pc.processor_ids ->> k = v order by k limit 1) as processor
    from partner_codes pc
    where pc.program_id = ${c.programId}
      and (lower(pc.code) = lower(${c.code}) or pc.processor_ids @> any(
        select jsonb_build_object(k, v) from jsonb_each_text(${sql.json(c.processorIds as never)}) as e(k, v)))
    order by lower(pc.code) = lower(${c.code}) desc, pc.id
    limit 1`;
  if (!other || other.same_name || other.processor === null) return 'taken';
  return { processor: other.processor, usedBy: other.code };
}

/** The program's codes (a partner's, with `partnerId`), oldest first. */
export function codesOf(sql: Sql, programId: number, partnerId: number | null) {
  return sql<CodeRow[]>`
    select ${COLUMNS(sql)} from partner_codes
    where program_id = ${programId} ${partnerId === null ? sql`` : sql`and partner_id = ${partnerId}`}
    order by id`;
}

/** Marks the program's code inactive (again, if it was); undefined when the program has no such code. */
export async function deactivateCode(sql: Sql, programId: number, codeId: number) {
  const [row] = await sql<CodeRow[]>`
    update partner_codes set status = 'inactive',
      updated_at = case when status = 'inactive' then updated_at else now() end
    where id = ${codeId} and program_id = ${programId}
    returning ${COLUMNS(sql)}`;
  return row;
}
