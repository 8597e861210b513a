// What every view (shared/views/) is made of: the conversions of a row's values to what the API answers and
// the events carry (ids and cents as numbers, times as ISO strings), and the schema pieces they share.
import { Type } from '@sinclair/typebox';
import type { TSchema } from '@sinclair/typebox';

/** An ISO 8601 time, or null. */
export const iso = (d: Date | string | null | undefined): string | null =>
  d === null || d === undefined ? null : (d instanceof Date ? d : new Date(d)).toISOString();

/** A bigint column (text in postgres.js) or a number as a number, or null. */
export const num = (v: number | string | null | undefined): number | null =>
  v === null || v === undefined ? null : Number(v);

/** `schema` or null. */
export const OrNull = <T extends TSchema>(schema: T, options: { description?: string } = {}) =>
  Type.Union([schema, Type.Null()], options);

export const Time = (options: { description?: string } = {}) =>
  Type.String({ format: 'date-time', ...options });

/** The fields every object's view ends with: `is_test` and `updated_at` (docs/webhooks.md). */
export const IS_TEST = Type.Boolean({ description: 'A test-mode object (test sale, test lead)' });
export const UPDATED_AT = Time({
  description: 'When the object last changed: keep the newest of each object, events come in any order',
});

/** A view's schema: its fields exactly (an answer or event with another field fails the tests). */
export const View = <P extends Record<string, TSchema>>(properties: P, description: string) =>
  Type.Object(properties, { additionalProperties: false, description });
