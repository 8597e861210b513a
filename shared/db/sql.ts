import postgres from 'postgres';
import { assertPatched, POSTGRES } from '../dependency-fixes.ts';

export type Sql = postgres.Sql;
export type Tx = postgres.TransactionSql;

/**
 * The process's one postgres.js instance. bigint columns come back as strings unless cast.
 * Reconnects are at most 0.5 s apart: postgres.js's own backoff grows with every failed attempt of any
 * connection to 10-20 s, so after a Postgres restart queries waited up to 19 s for a reconnect (measured;
 * docs/operations.md "Faults"). Refuses a postgres.js without the project's fix
 * (patches/postgres+3.4.9.patch; shared/dependency-fixes.ts).
 */
export function createSql(url: string, max = 10, appName = 'svc', connectTimeoutMs?: number): Sql {
  assertPatched(POSTGRES);
  return postgres(url, {
    max,
    backoff: reconnectDelaySeconds,
    // postgres.js's default is 30 s, in seconds: covers TCP, start-up and authentication.
    ...(connectTimeoutMs === undefined ? {} : { connect_timeout: connectTimeoutMs / 1000 }),
    onnotice: () => {},
    connection: { application_name: appName },
  });
}

/** 50 ms after the first failed connection attempt, doubling to at most 0.5 s. */
/**
 * A boolean column for `unnest(...)`, to cast with `::text[]::bool[]` in SQL: postgres.js types a JS boolean
 * array as one boolean ("cannot cast type boolean to boolean[]"), and a string array cast straight to
 * `::bool[]` goes through its boolean serializer, which makes every string false. As text, Postgres casts.
 */
export function boolArray(values: boolean[]): string[] {
  return values.map(String);
}

export function reconnectDelaySeconds(failures: number): number {
  return Math.min(0.05 * 2 ** Math.max(0, failures - 1), 0.5);
}

/**
 * Errors caused by the values of a message, which retrying cannot fix: SQLSTATE class 22 (data exception)
 * and 23 (integrity constraint violation). Class 42 (syntax, undefined column, bad cast) is a bug in our
 * SQL, not in the message: it is retried and surfaces, instead of dead-lettering every message.
 */
export function isDataError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^(22|23)/.test(code);
}

/** Node socket errors and postgres.js's own connection errors. */
const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
  'CONNECT_TIMEOUT',
]);

/**
 * Errors that mean Postgres is unreachable or going away (stopped, restarting, every backend terminated),
 * which waiting fixes: socket errors, postgres.js connection errors, SQLSTATE class 08 (connection
 * exception), 57P01-57P03 (admin/crash shutdown, cannot connect now) and 53300 (too many connections).
 */
export function isConnectionError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return false;
  return CONNECTION_CODES.has(code) || /^08/.test(code) || /^57P0[123]$/.test(code) || code === '53300';
}
