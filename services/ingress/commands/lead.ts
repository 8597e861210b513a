// The input rules of a lead (spec 4.2): what the body must hold, which program it belongs to, and the
// command produced for the journey worker. Pure; the route (routes/lead.ts) does the cache lookups between.
import { HttpError } from '../../../shared/http/server.ts';
import { parseClickId } from '../../../shared/domain/ids.ts';
import type { LeadCommand } from '../../../shared/contracts/commands.ts';
import { optString, parseCommandAdditionalData } from '../input.ts';
import type { AdditionalData } from '../input.ts';

export const CUSTOMER_NOT_FOUND = 'Customer not found. Provide a valid click_id or customer_key.';

export interface LeadInput {
  ad: AdditionalData & { eventName: string | null };
  clickId: string | null;
  customerKey: string | null;
  email: string | null;
}

/** The body fields checked before authentication. */
export function parseLeadBody(body: Record<string, unknown>): LeadInput {
  return {
    ad: parseCommandAdditionalData(body),
    clickId: optString(body, 'click_id'),
    customerKey: optString(body, 'customer_key'),
    email: optString(body, 'email', 320),
  };
}

/**
 * Whether the lead can name its customer at all, given the token's program (null in browser mode).
 * Test mode skips these: it records only an is_test event.
 */
export function checkLeadIdentity(input: LeadInput, tokenProgram: number | null): void {
  const { ad, clickId, customerKey } = input;
  if (!ad.testMode && clickId === null && customerKey === null) {
    throw new HttpError(400, 'click_id or customer_key is required');
  }
  // Browser mode, no click, no program: nothing can identify or create the customer (CONTRACT).
  if (!ad.testMode && clickId === null && tokenProgram === null && ad.programId === null) {
    throw new HttpError(400, CUSTOMER_NOT_FOUND);
  }
  if (clickId !== null && !parseClickId(clickId) && !ad.testMode) {
    throw new HttpError(400, CUSTOMER_NOT_FOUND);
  }
}

/** A test lead must name its program, by token or additional_data.program_id. */
export function checkTestLeadProgram(input: LeadInput, programId: number | null): void {
  if (input.ad.testMode && programId === null) {
    throw new HttpError(
      400,
      'additional_data.program_id is required for a test lead without a tracking token',
    );
  }
}

export interface LeadContext {
  requestId: string;
  ts: number;
  tokenProgram: number | null;
  /** The program the lead resolved to (token, additional_data, or the click id's partner-program). */
  programId: number | null;
}

/** The command; reads the remaining optional fields (session_id, page_url), so it can still throw a 400. */
export function buildLeadCommand(
  input: LeadInput,
  body: Record<string, unknown>,
  ctx: LeadContext,
): LeadCommand {
  const { ad } = input;
  return {
    v: 1,
    type: 'lead',
    request_id: ctx.requestId,
    ts: ctx.ts,
    token_program_id: ctx.tokenProgram,
    program_id_hint: ad.programId ?? (ad.testMode ? ctx.programId : null),
    click_id: input.clickId,
    customer_key: input.customerKey,
    email: input.email,
    event_name: ad.eventName,
    session_id: optString(body, 'session_id', 128),
    page_url: optString(body, 'page_url', 2048),
    is_test: ad.testMode,
  };
}

/** Keyed by click_id on the clicks topic: the lead is ordered behind its click. */
export function leadKey(cmd: LeadCommand, programId: number | null): string {
  return cmd.click_id ?? `key:${programId}:${cmd.customer_key ?? cmd.request_id}`;
}
