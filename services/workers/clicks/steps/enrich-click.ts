// Enrichment step: user agent → device_type/device_os/browser_name, client IP → geo_country/region/city and
// its keyed hash (ip_hash: the partner_ip review hold compares it with partners' sign-ins; the address itself
// is not stored). Pure and local (an LRU for user agents, an mmdb reader for geo): no I/O per message.
import type { ClickMessage } from '../../../../shared/contracts/clicks.ts';
import type { DeviceInfo } from '../enrich/user-agent.ts';
import type { GeoLookup, GeoInfo } from '../enrich/geo.ts';
import type { IpHasher } from '../../../../shared/domain/ip-hash.ts';

export type EnrichedClick = ClickMessage & DeviceInfo & GeoInfo & { ip_hash?: string | null };

export function createEnrichClickStep(deps: {
  parseUserAgent: (ua: string | null | undefined) => DeviceInfo;
  geo: Pick<GeoLookup, 'lookup'>;
  hashIp?: IpHasher;
}) {
  return function enrichClick(msg: ClickMessage): EnrichedClick {
    const ip_hash = deps.hashIp?.(msg.ip) ?? null;
    return { ...msg, ...deps.parseUserAgent(msg.user_agent), ...deps.geo.lookup(msg.ip), ip_hash };
  };
}
