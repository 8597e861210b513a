// The sources an import can read, by name: every list of sources (the API's enum, the dashboard's picker,
// the CLI's help) derives from this table. Adding one (Tolt, FirstPromoter, PartnerStack) is its file
// beside these and one line here, plus its name in SOURCE_NAMES (types.ts) and in the migration's check.
import type { SourceAdapter, SourceName } from '../types.ts';
import { rewardful } from './rewardful.ts';
import { dub } from './dub.ts';
import { csv } from './csv.ts';

export const SOURCES: Record<SourceName, SourceAdapter> = { rewardful, dub, csv };
