// The importers' settings (docs/importing.md "Settings"), validated with the rest of the configuration at
// boot: the key the sources' credentials are sealed with, an override of the sources' rate limits, one
// request's bound, and the largest CSV upload.
import { parseDuration } from './config-mail.ts';
import { parseSecretKey } from './importing/secrets.ts';
import { parseRateLimit } from './importing/rate-limit.ts';
import type { RateLimit } from './importing/rate-limit.ts';

type Env = Record<string, string | undefined>;

export interface ImportConfig {
  /**
   * IMPORT_SECRET_KEY: 32 bytes (64 hex digits or base64) that seal a source's credentials at rest
   * (AES-256-GCM). Unset: imports from Rewardful and Dub are refused (503), CSV imports work. `npm start`
   * generates one and keeps it in its data folder.
   */
  importSecretKey: Buffer | null;
  /** IMPORT_RATE_LIMIT (`<requests>/<duration>`, e.g. `45/30s`): replaces every source's own limit. */
  importRateLimit: RateLimit | undefined;
  /** IMPORT_TIMEOUT_MS (30 s): one request to a source. */
  importTimeoutMs: number;
  /** IMPORT_CSV_MAX_BYTES (10 MB): the largest CSV file an import takes. */
  importCsvMaxBytes: number;
}

export function loadImportConfig(env: Env, problems: string[]): ImportConfig {
  const int = (name: string, dflt: number, min: number, max: number): number => {
    const raw = env[name];
    if (raw === undefined || raw === '') return dflt;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min || n > max) {
      problems.push(`${name} must be an integer between ${min} and ${max} (got "${raw}")`);
      return dflt;
    }
    return n;
  };
  let key: Buffer | null = null;
  const keyText = env.IMPORT_SECRET_KEY ?? '';
  if (keyText !== '') {
    key = parseSecretKey(keyText);
    // The value itself is never echoed: it is a secret.
    if (key === null) problems.push('IMPORT_SECRET_KEY must be 32 bytes as 64 hex digits or base64');
  }
  let rateLimit: RateLimit | undefined;
  const rl = env.IMPORT_RATE_LIMIT ?? '';
  if (rl !== '') {
    rateLimit = parseRateLimit(rl, parseDuration) ?? undefined;
    if (rateLimit === undefined)
      problems.push(`IMPORT_RATE_LIMIT must be <requests>/<duration>, such as 45/30s (got "${rl}")`);
  }
  return {
    importSecretKey: key,
    importRateLimit: rateLimit,
    importTimeoutMs: int('IMPORT_TIMEOUT_MS', 30_000, 100, 600_000),
    importCsvMaxBytes: int('IMPORT_CSV_MAX_BYTES', 10 * 1024 * 1024, 1024, 200 * 1024 * 1024),
  };
}
