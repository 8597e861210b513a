// The rules of partner codes (CONTRACT part three "Codes as well as links"; docs/codes.md), pure: what a
// code may be, what a create body means once its schema has passed, and a row as the API shows it.
import { iso } from '../../common.ts';
import type { CodeRow, ProcessorIds } from './dal.ts';
import { PROCESSORS, PROCESSOR_WORDS } from '../../../../shared/processors/index.ts';

/** 3 to 32 letters, digits, underscores or dashes; unique per program regardless of case. */
export const CODE_RE = /^[A-Za-z0-9_-]{3,32}$/;
/** A code's processor_ids: one entry per processor (shared/processors/index.ts). */
export { PROCESSORS };
export const CODE_STATUSES = ['active', 'inactive'] as const;
export const MAX_PROCESSOR_ID = 255;

export const ERR = {
  code: 'code must be 3 to 32 letters, digits, underscores or dashes',
  processorIds: `processor_ids must be an object whose ${PROCESSOR_WORDS} entries are strings of 1 to ${MAX_PROCESSOR_ID} characters`,
  taken: 'Code already taken',
  processorIdTaken: (processor: string, code: string) =>
    `processor_ids.${processor} is already used by code ${code} of this program`,
  notFound: 'Code not found',
  partnerNotInProgram: 'Partner not found in this program',
} as const;

/** A validated create body, normalised: processor ids trimmed, empty or null entries dropped. */
export function codeInput(b: {
  code: string;
  processor_ids?: Record<string, string | null | undefined> | null;
}) {
  const ids: ProcessorIds = {};
  for (const p of PROCESSORS) {
    const v = b.processor_ids?.[p]?.trim();
    if (v) ids[p] = v;
  }
  return { code: b.code, processor_ids: ids };
}

export const toCode = (r: CodeRow) => ({
  id: Number(r.id),
  code: r.code,
  partner_id: Number(r.partner_id),
  program_id: Number(r.program_id),
  processor_ids: r.processor_ids,
  status: r.status,
  created_at: iso(r.created_at)!,
});

/** What a partner sees of its code: no processor ids (the advertiser's processor objects). */
export const toPartnerCode = (r: CodeRow) => ({
  id: Number(r.id),
  code: r.code,
  status: r.status,
  created_at: iso(r.created_at)!,
});
