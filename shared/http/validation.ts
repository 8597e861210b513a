// Schema validation for Fastify routes. A route's TypeBox schema is its type, its check and its OpenAPI
// description at once; a failure is answered 400 `{ error }` with the exact message the API promises:
// - the message is the `errorMessage` of the deepest schema node on the failing path (or, for a Checked
//   node, the message its check function returns);
// - when several fields fail, the first one in the schema's property order wins, so the order of the
//   properties is the precedence of the checks;
// - a Nullable object given an object is judged by the object's own rules (its fields' messages);
// - a body that is not a JSON object is `Request body must be a JSON object`; no body at all is {};
// - query-string integers arrive as strings: plain decimal digits are turned into numbers first;
// - path ids are never a 400: an integer path parameter becomes its number, or NaN when malformed, which
//   the access checks answer 404 like an unknown id (a malformed and a foreign id look the same).
import { Kind, Type, TypeRegistry } from '@sinclair/typebox';
import type { SchemaOptions, Static, TSchema, TUnsafe } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import type { ValueError } from '@sinclair/typebox/errors';
import type { FastifySchemaCompiler, FastifyTypeProvider } from 'fastify';
import { BODY_NOT_OBJECT, EMAIL_RE, HttpError } from './server.ts';
import { isPlainObject } from '../json.ts';

/** Types request parts from their TypeBox schemas: `app.withTypeProvider<TypeBoxProvider>()`. */
export interface TypeBoxProvider extends FastifyTypeProvider {
  validator: this['schema'] extends TSchema ? Static<this['schema']> : unknown;
  serializer: unknown;
}

// ---- schema helpers ----

const CHECKED = 'Checked';
type Check = (value: unknown) => string | null;
TypeRegistry.Set(CHECKED, (schema: { check: Check }, value) => schema.check(value) === null);

/**
 * A rule JSON Schema cannot state exactly (an ISO 4217 code, a URL origin, the commission policy), checked
 * by the same function the service uses; `check` returns the error message or null. `doc` is the JSON
 * Schema the OpenAPI shows for it: describe the shape, never something stricter than the check.
 */
export function Checked<T>(doc: SchemaOptions, check: Check): TUnsafe<T> {
  return Type.Unsafe<T>({ ...doc, [Kind]: CHECKED, check });
}

/** A string from a fixed list; anything else (wrong type included) is `message`. */
export function StringEnum<const V extends readonly string[]>(
  values: V,
  message: string,
  options: SchemaOptions = {},
): TUnsafe<V[number]> {
  return Checked<V[number]>({ type: 'string', enum: [...values], ...options }, (v) =>
    values.includes(v as string) ? null : message,
  );
}

/** `schema` or null; a failure is `message` (default: the message of `schema`, when it is Checked). */
export function Nullable<T extends TSchema>(schema: T, message?: string) {
  return Type.Union([schema, Type.Null()], message === undefined ? {} : { errorMessage: message });
}

/**
 * A string that, trimmed of surrounding white space (String.prototype.trim's set, which is JavaScript's
 * \s), is 1 to `max` characters long; the service trims it.
 */
export function Trimmed(max: number, options: SchemaOptions = {}) {
  return Type.String({ pattern: `^\\s*\\S(?:[\\s\\S]{0,${max - 2}}\\S)?\\s*$`, ...options });
}

/** An email address (EMAIL_RE once trimmed, at most `max` characters); the service trims and lowercases. */
export function Email(max: number, options: SchemaOptions = {}) {
  return Type.String({
    pattern: `^\\s*(?=\\S{1,${max}}\\s*$)${EMAIL_RE.source.slice(1, -1)}\\s*$`,
    ...options,
  });
}

/** `{ data: schema }`, the envelope of every management answer. */
export const Data = <T extends TSchema>(schema: T) => Type.Object({ data: schema });
/** `{ data: [schema] }`. */
export const DataList = <T extends TSchema>(schema: T) => Type.Object({ data: Type.Array(schema) });

// ---- the compiler and the formatter ----

type Node = {
  [Kind]?: string;
  errorMessage?: string;
  check?: Check;
  properties?: Record<string, Node>;
  items?: Node;
  type?: unknown;
  anyOf?: Node[];
};

/** The object member of a union (as Nullable makes), when `value` is an object it should be judged by. */
function objectMember(node: Node, value: unknown): number {
  if (node.anyOf === undefined || !isPlainObject(value)) return -1;
  return node.anyOf.findIndex((n) => n.type === 'object');
}

const segments = (path: string): string[] =>
  path === ''
    ? []
    : path
        .slice(1)
        .split('/')
        .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));

/**
 * The message for a failed value: of all errors, the one on the earliest top-level property of the schema
 * (an error on the value itself comes first); its message is the one of the deepest node on its path that
 * carries one.
 */
export function formatError(
  schema: TSchema,
  errors: Iterable<ValueError>,
  rootMessage?: string,
): string | null {
  const root = schema as Node;
  const order = Object.keys(root.properties ?? {});
  const rankOf = (first: string | undefined) => {
    if (first === undefined) return -1;
    const i = order.indexOf(first);
    return i === -1 ? order.length : i;
  };
  let best: { error: ValueError; rank: number } | null = null;
  for (const error of errors) {
    const rank = rankOf(segments(error.path)[0]);
    if (best === null || rank < best.rank) best = { error, rank };
  }
  if (best === null) return null;
  let { error } = best;
  // An object inside a union failed its own rules: the first of its errors says what (property order).
  for (let i = objectMember(error.schema as Node, error.value); i !== -1;) {
    const inner = error.errors[i]?.First();
    if (inner === undefined) break;
    error = inner;
    i = objectMember(error.schema as Node, error.value);
  }
  // A Checked node (or a union holding one, as Nullable makes) says itself what is wrong.
  const failing = error.schema as Node;
  for (const n of [failing, ...(failing.anyOf ?? [])]) {
    const m = n[Kind] === CHECKED && n.check ? n.check(error.value) : null;
    if (m !== null) return m;
  }
  const path = segments(error.path);
  if (path.length === 0 && rootMessage !== undefined && root.errorMessage === undefined) return rootMessage;
  let node: Node | undefined = root;
  let message: string | undefined;
  for (let i = 0; node !== undefined; i++) {
    if (node.errorMessage !== undefined) message = node.errorMessage;
    if (i === path.length) break;
    const seg = path[i]!;
    const m = objectMember(node, {});
    const props: Record<string, Node> | undefined =
      node.properties ?? (m === -1 ? undefined : node.anyOf![m]!.properties);
    node = props?.[seg] ?? (/^[0-9]+$/.test(seg) ? node.items : undefined);
  }
  return message ?? `Invalid request: ${error.path || 'body'} ${error.message}`;
}

/** A path id: a positive decimal integer, else NaN (which the access checks answer with 404). */
export function pathId(v: unknown): number {
  return typeof v === 'string' && /^[1-9][0-9]{0,15}$/.test(v) ? Number(v) : Number.NaN;
}

/**
 * The largest integer a query string can carry: queryNumber reads at most 15 digits, a longer number stays
 * text and fails its schema. Every integer query parameter states it as its `maximum` (or a lower one).
 */
export const MAX_QUERY_INTEGER = 999_999_999_999_999;

/** Query-string numbers: plain decimal digits become a number; anything else stays text and fails. */
const queryNumber = (v: unknown): unknown =>
  typeof v === 'string' && /^[0-9]{1,15}$/.test(v) ? Number(v) : v;

/** The object with `convert` applied to the properties the schema types as numbers. */
function coerce(schema: Node, data: Record<string, unknown>, convert: (v: unknown) => unknown) {
  const out: Record<string, unknown> = { ...data };
  for (const [k, s] of Object.entries(schema.properties ?? {})) {
    const numeric = [s, ...(s.anyOf ?? [])].some((n) => n.type === 'integer' || n.type === 'number');
    if (numeric && out[k] !== undefined) out[k] = convert(out[k]);
  }
  return out;
}

/** Fastify's validatorCompiler for TypeBox schemas; see the top of this file for what it answers. */
export const typeBoxValidator: FastifySchemaCompiler<TSchema> = ({ schema, httpPart, method, url }) => {
  if (httpPart === 'params') {
    return (data: unknown) => ({ value: coerce(schema as Node, data as Record<string, unknown>, pathId) });
  }
  if ((schema as Node)[Kind] === undefined) {
    throw new Error(`${method} ${url}: ${httpPart} schema is not a TypeBox schema`);
  }
  const compiled = TypeCompiler.Compile(schema);
  return (data: unknown) => {
    let value = data;
    if (httpPart === 'body' && (value === undefined || value === null)) value = {};
    if (httpPart === 'querystring' && typeof value === 'object' && value !== null) {
      value = coerce(schema as Node, value as Record<string, unknown>, queryNumber);
    }
    if (compiled.Check(value)) return { value };
    const rootMessage = httpPart === 'body' ? BODY_NOT_OBJECT : undefined;
    const message = formatError(schema, compiled.Errors(value), rootMessage) ?? 'Invalid request';
    return { error: new HttpError(400, message) };
  };
};

/**
 * The same check for a part of a body that a handler runs itself, when other answers must come first
 * (authentication, an Idempotency-Key): compiled once; returns the body typed or throws the same 400.
 */
export function bodyCheck<T extends TSchema>(schema: T): (body: unknown) => Static<T> {
  const compiled = TypeCompiler.Compile(schema);
  return (body) => {
    if (compiled.Check(body)) return body;
    const message = formatError(schema, compiled.Errors(body), BODY_NOT_OBJECT) ?? 'Invalid request';
    throw new HttpError(400, message);
  };
}
