// The input rules of a lead (spec 4.2): the body's schema, which program it belongs to, and the command
// produced for the journey worker. Pure; the route (routes/lead.ts) does the cache lookups between.
import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';
import { HttpError } from '../../../shared/http/server.ts';
import { bodyCheck } from '../../../shared/http/validation.ts';
import { parseClickId } from '../../../shared/domain/ids.ts';
import type { LeadCommand } from '../../../shared/contracts/commands.ts';
import { CommandAdditionalData, MAX_ID, OptString, commandAdditionalData, trimmed } from '../input.ts';
import type { AdditionalDataInput } from '../input.ts';

export const CUSTOMER_NOT_FOUND = 'Customer not found. Provide a valid click_id or customer_key.';

// Property order is the order the errors are reported in (shared/http/validation.ts).
const leadFirst = {
  additional_data: CommandAdditionalData,
  click_id: OptString('click_id', MAX_ID, 'The click_id of the click (browser mode: proves attribution).'),
  customer_key: OptString('customer_key', MAX_ID, 'Your own id of the customer (server mode).'),
  email: OptString('email', 320),
};
/** Read after the Idempotency-Key is checked, as they always were. */
const leadLast = { session_id: OptString('session_id', 128), page_url: OptString('page_url', 2048) };

/** The lead body, as documented. */
export const LeadBody = Type.Object({ ...leadFirst, ...leadLast });
/** The fields checked before authentication (the route's schema validation). */
export const LeadFirst = Type.Object(leadFirst);
const checkLeadLast = bodyCheck(Type.Object(leadLast));

export interface LeadInput {
  ad: AdditionalDataInput & { eventName: string | null };
  clickId: string | null;
  customerKey: string | null;
  email: string | null;
}

/** What the fields checked before authentication say. */
export function leadInput(body: Static<typeof LeadFirst>): LeadInput {
  return {
    ad: commandAdditionalData(body.additional_data),
    clickId: trimmed(body.click_id),
    customerKey: trimmed(body.customer_key),
    email: trimmed(body.email),
  };
}

// Not in the schema: these depend on the token's program, known only after authentication.
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

/** The command; checks the remaining optional fields (session_id, page_url), so it can still throw a 400. */
export function buildLeadCommand(input: LeadInput, body: unknown, ctx: LeadContext): LeadCommand {
  const { ad } = input;
  const last = checkLeadLast(body);
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
    session_id: trimmed(last.session_id),
    page_url: trimmed(last.page_url),
    is_test: ad.testMode,
  };
}

/** Keyed by click_id on the clicks topic: the lead is ordered behind its click. */
export function leadKey(cmd: LeadCommand, programId: number | null): string {
  return cmd.click_id ?? `key:${programId}:${cmd.customer_key ?? cmd.request_id}`;
}
