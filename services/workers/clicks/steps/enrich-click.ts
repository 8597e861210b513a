// Enrichment step: user agent → device_type/device_os/browser_name, client IP → geo_country/region/city.
// Pure and local (an LRU for user agents, an mmdb reader for geo): no I/O per message.
import type { ClickMessage } from '../../../../shared/contracts/clicks.ts';
import type { DeviceInfo } from '../enrich/user-agent.ts';
import type { GeoLookup, GeoInfo } from '../enrich/geo.ts';

export type EnrichedClick = ClickMessage & DeviceInfo & GeoInfo;

export function createEnrichClickStep(deps: {
  parseUserAgent: (ua: string | null | undefined) => DeviceInfo;
  geo: Pick<GeoLookup, 'lookup'>;
}) {
  return function enrichClick(msg: ClickMessage): EnrichedClick {
    return { ...msg, ...deps.parseUserAgent(msg.user_agent), ...deps.geo.lookup(msg.ip) };
  };
}
