// The rules of imports (CONTRACT part five; docs/importing.md), pure where they can be: what a create body
// means once its schema passed, the credentials' check and sealing, the address rules of api_base_url, and
// an import as the API shows it (never its credentials).
import { HttpError } from '../../../../shared/http/server.ts';
import { checkBaseUrl } from '../../../../shared/importing/http.ts';
import { seal } from '../../../../shared/importing/secrets.ts';
import { SOURCES } from '../../../../shared/importing/sources/index.ts';
import { COUNT_KEYS, OUTCOMES, SOURCE_NAMES } from '../../../../shared/importing/types.ts';
import type { Counts, ImportOptions, SourceName } from '../../../../shared/importing/types.ts';
import type { AddressPolicy } from '../../../../shared/webhooks/address.ts';
import { iso } from '../../common.ts';
import type { ImportRow } from './dal.ts';

/** The one credential each source with an API takes. */
export const CREDENTIAL_FIELD = { rewardful: 'api_secret', dub: 'api_key' } as const;

export const ERR = {
  source: `source must be one of ${SOURCE_NAMES.join(', ')}`,
  credentials: 'credentials must be an object',
  options: 'options must be an object',
  apiBaseUrl: 'options.api_base_url must be an absolute http:// or https:// URL',
  campaignIds: 'options.campaign_ids must be a list of 1 to 1000 campaign or group ids (strings), or null',
  includeInactive: 'options.include_inactive must be true or false',
  dryRun: 'options.dry_run must be true or false',
  csvAsJson: 'A CSV import sends its file: POST it with Content-Type: text/csv to …/imports?source=csv',
  csvEmpty: 'The CSV file is empty',
  csvQuery: 'A text/csv body is a CSV import: add ?source=csv',
  notFound: 'Import not found',
  noKey:
    'Imports from Rewardful and Dub need IMPORT_SECRET_KEY on this server to keep their credentials (docs/importing.md)',
  noCampaigns: (label: string) => `${label} has no campaigns to pick from`,
  ended: (status: string) => `Import already ${status}`,
} as const;

/** The options of a create body as the schema lets them through. */
export interface OptionsBody {
  api_base_url?: string | null;
  campaign_ids?: string[] | null;
  include_inactive?: boolean;
  dry_run?: boolean;
}

export function importOptions(o: OptionsBody | undefined): { options: ImportOptions; dryRun: boolean } {
  const ids = o?.campaign_ids ?? null;
  return {
    options: {
      api_base_url: o?.api_base_url ?? null,
      campaign_ids: ids === null ? null : [...new Set(ids.map((x) => x.trim()))],
      include_inactive: o?.include_inactive ?? false,
    },
    dryRun: o?.dry_run ?? false,
  };
}

/** The 400 of a source's credentials (each source says which field), or null. */
export function credentialsError(source: SourceName, credentials: unknown): string | null {
  return SOURCES[source].credentialsError(credentials);
}

/** The credentials sealed for storage (only the fields the source uses are kept). */
export function sealCredentials(
  key: Buffer | null,
  programId: number,
  source: SourceName,
  c: unknown,
): Buffer {
  if (key === null) throw new HttpError(503, ERR.noKey);
  const field = CREDENTIAL_FIELD[source as keyof typeof CREDENTIAL_FIELD];
  const value = (c as Record<string, string>)[field]!.trim();
  return seal(key, programId, JSON.stringify({ [field]: value }));
}

/** options.api_base_url's rules (http(s), and the address rules of outbound calls), as a 400. */
export async function checkApiBaseUrl(url: string | null, policy: AddressPolicy): Promise<void> {
  if (url === null) return;
  const error = await checkBaseUrl(url, policy);
  if (error !== null) throw new HttpError(400, error);
}

/** The first step of a source: where a new import starts. */
export const firstStep = (source: SourceName) => SOURCES[source].steps[0]!;

function countsOf(c: Partial<Counts>): Counts {
  return Object.fromEntries(
    Object.values(COUNT_KEYS).map((k) => [k, Object.fromEntries(OUTCOMES.map((o) => [o, c[k]?.[o] ?? 0]))]),
  ) as Counts;
}

/** An import as the API shows it: never its credentials, never its file. */
export function toImport(r: ImportRow) {
  return {
    id: Number(r.id),
    program_id: Number(r.program_id),
    source: r.source,
    status: r.status,
    step: r.step,
    dry_run: r.dry_run,
    options: {
      api_base_url: r.options.api_base_url ?? null,
      campaign_ids: r.options.campaign_ids ?? null,
      include_inactive: r.options.include_inactive ?? false,
    },
    counts: countsOf(r.counts),
    error: r.error,
    created_at: iso(r.created_at)!,
    started_at: iso(r.started_at),
    finished_at: iso(r.finished_at),
  };
}
