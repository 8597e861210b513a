// Body rules every tracking route shares, as schema pieces: optional strings and `additional_data`. Each
// error string is what integrators match on (spec section 7); the routes' schemas validate with them.
import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';
import { Checked, Nullable } from '../../shared/http/validation.ts';

/** The longest id-like string (click_id, customer_key, transaction_id...) a command accepts. */
export const MAX_ID = 255;

/** Why an optional string is refused (a non-string; longer than `max` once trimmed), or null. */
export function optStringError(field: string, v: unknown, max = MAX_ID): string | null {
  if (v === undefined || v === null) return null;
  if (typeof v !== 'string') return `${field} must be a string`;
  return v.trim().length > max ? `${field} must be at most ${max} characters` : null;
}

/** An optional string of at most `max` characters once trimmed; empty or white space means absent. */
export function OptString(field: string, max = MAX_ID, description?: string) {
  const doc = `Trimmed; at most ${max} characters once trimmed; empty means absent.`;
  return Type.Optional(
    Checked<string | null>(
      { type: ['string', 'null'], description: description ? `${description} ${doc}` : doc },
      (v) => optStringError(field, v, max),
    ),
  );
}

/** A checked optional string, trimmed; empty is null. NULs are already gone (installJsonHandling). */
export function trimmed(v: string | null | undefined): string | null {
  const s = v?.trim();
  return s ? s : null;
}

const adFields = {
  test_mode: Type.Optional(
    Type.Boolean({
      errorMessage: 'additional_data.test_mode must be a boolean',
      description: 'Test mode: records only an is_test event, no customer, no commission.',
    }),
  ),
  program_id: Type.Optional(
    Nullable(
      Type.Integer({
        minimum: 1,
        maximum: Number.MAX_SAFE_INTEGER,
        description: 'Names the program of a test event (or of a browser-mode lead) without a token or link.',
      }),
      'additional_data.program_id must be a positive integer',
    ),
  ),
};

const adMessage = 'additional_data must be an object';
/** `additional_data` of a click: an object with an optional test_mode and program_id. */
export const AdditionalData = Type.Optional(Nullable(Type.Object(adFields), adMessage));
/** `additional_data` of a lead or sale, which may also carry an event_name. */
export const CommandAdditionalData = Type.Optional(
  Nullable(Type.Object({ ...adFields, event_name: OptString('event_name') }), adMessage),
);

export interface AdditionalDataInput {
  testMode: boolean;
  /** additional_data.program_id: names the program of a test event or of a browser-mode lead. */
  programId: number | null;
}

/** What a checked `additional_data` says. */
export function additionalData(ad: Static<typeof AdditionalData> | undefined): AdditionalDataInput {
  return { testMode: ad?.test_mode === true, programId: ad?.program_id ?? null };
}

/** The same, with the event_name of a lead or sale. */
export function commandAdditionalData(
  ad: Static<typeof CommandAdditionalData> | undefined,
): AdditionalDataInput & { eventName: string | null } {
  return { ...additionalData(ad), eventName: trimmed(ad?.event_name) };
}
