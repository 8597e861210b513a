// Body rules every tracking route shares: optional strings and `additional_data`. Pure, and each error
// string is what integrators match on (spec section 7).
import { HttpError } from '../../shared/http/server.ts';
import { isPlainObject } from '../../shared/json.ts';

/** The longest id-like string (click_id, customer_key, transaction_id...) a command accepts. */
export const MAX_ID = 255;

/** An optional string, trimmed; empty is null; longer than `max` is a 400. NULs are already gone. */
export function optString(body: Record<string, unknown>, field: string, max = MAX_ID): string | null {
  const v = body[field];
  if (v === undefined || v === null) return null;
  if (typeof v !== 'string') throw new HttpError(400, `${field} must be a string`);
  const s = v.trim();
  if (s.length > max) throw new HttpError(400, `${field} must be at most ${max} characters`);
  return s === '' ? null : s;
}

export interface AdditionalData {
  testMode: boolean;
  /** additional_data.program_id: names the program of a test event or of a browser-mode lead. */
  programId: number | null;
  /** The object itself ({} when absent), for the fields only some routes read (event_name). */
  fields: Record<string, unknown>;
}

/** `additional_data` of a click, lead or sale: an object with an optional test_mode and program_id. */
export function parseAdditionalData(body: Record<string, unknown>): AdditionalData {
  const ad = body.additional_data;
  if (ad === undefined || ad === null) return { testMode: false, programId: null, fields: {} };
  if (!isPlainObject(ad)) throw new HttpError(400, 'additional_data must be an object');
  if (ad.test_mode !== undefined && typeof ad.test_mode !== 'boolean') {
    throw new HttpError(400, 'additional_data.test_mode must be a boolean');
  }
  const pid = ad.program_id;
  if (pid !== undefined && pid !== null && !(Number.isSafeInteger(pid) && (pid as number) > 0)) {
    throw new HttpError(400, 'additional_data.program_id must be a positive integer');
  }
  return { testMode: ad.test_mode === true, programId: (pid as number | undefined) ?? null, fields: ad };
}

/** `additional_data` of a lead or sale, which may also carry an event_name. */
export function parseCommandAdditionalData(
  body: Record<string, unknown>,
): AdditionalData & { eventName: string | null } {
  const ad = parseAdditionalData(body);
  return { ...ad, eventName: optString(ad.fields, 'event_name') };
}
