// Where outbound webhooks may go (CONTRACT "Webhooks to integrators", Safety; docs/webhooks.md "SSRF"). An
// advertiser names the URL, so without these rules a webhook is a way to make the service call its own
// network: Postgres, Kafka, the metrics port, a cloud's metadata service. Checked at registration (the API)
// and again at each delivery after DNS (the worker), where `guardedLookup` answers the HTTP client's lookup
// with the addresses it checked, so nothing resolves the name a second time between the check and the
// connection (DNS rebinding). Redirects are never followed (the worker treats a 3xx as a failure).
import { BlockList, isIP } from 'node:net';
import { lookup as dnsLookup } from 'node:dns/promises';
import type { LookupAddress } from 'node:dns';

/** The rules in force: WEBHOOK_ALLOW_PRIVATE and WEBHOOK_RESOLVE (shared/config.ts). */
export interface AddressPolicy {
  allowPrivate: boolean;
  /** Names answered before DNS (host → address), as curl's --resolve. */
  resolve: Record<string, string>;
}

type Family = 'ipv4' | 'ipv6';

/** Each refused range with the class it belongs to (the class names the error message). */
const RANGES: [string, number, Family, string][] = [
  ['0.0.0.0', 8, 'ipv4', 'unspecified'],
  ['10.0.0.0', 8, 'ipv4', 'private'],
  ['100.64.0.0', 10, 'ipv4', 'carrier-grade NAT'],
  ['127.0.0.0', 8, 'ipv4', 'loopback'],
  ['169.254.0.0', 16, 'ipv4', 'link-local'],
  ['172.16.0.0', 12, 'ipv4', 'private'],
  ['192.0.0.0', 24, 'ipv4', 'reserved'],
  ['192.0.2.0', 24, 'ipv4', 'reserved'],
  ['192.168.0.0', 16, 'ipv4', 'private'],
  ['198.18.0.0', 15, 'ipv4', 'reserved'],
  ['198.51.100.0', 24, 'ipv4', 'reserved'],
  ['203.0.113.0', 24, 'ipv4', 'reserved'],
  ['224.0.0.0', 4, 'ipv4', 'multicast'],
  ['240.0.0.0', 4, 'ipv4', 'reserved'],
  ['::', 128, 'ipv6', 'unspecified'],
  ['::1', 128, 'ipv6', 'loopback'],
  ['::', 96, 'ipv6', 'reserved'],
  ['100::', 64, 'ipv6', 'reserved'],
  ['2001:db8::', 32, 'ipv6', 'reserved'],
  ['fc00::', 7, 'ipv6', 'private'],
  ['fe80::', 10, 'ipv6', 'link-local'],
  ['fec0::', 10, 'ipv6', 'private'],
  ['ff00::', 8, 'ipv6', 'multicast'],
];

/** Addresses of cloud metadata services, named as such (they also fall in a class above). */
const METADATA_ADDRESSES = new Set(['169.254.169.254', 'fd00:ec2::254', '100.100.100.200']);
/** Names that are the metadata service or this machine whatever DNS says. */
const REFUSED_NAMES = [/^metadata\.google\.internal$/, /^metadata$/, /^localhost$/, /\.localhost$/];

const lists = new Map<string, BlockList>();
for (const [net, prefix, family, cls] of RANGES) {
  let list = lists.get(cls);
  if (!list) lists.set(cls, (list = new BlockList()));
  list.addSubnet(net, prefix, family);
}

/** An IPv6 address's 16 bytes, or null when it does not parse. */
function ipv6Bytes(address: string): number[] | null {
  let text = address.toLowerCase();
  // A trailing dotted IPv4 (::ffff:127.0.0.1) becomes two groups.
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const v4 = dotted[1]!.split('.').map(Number);
    text =
      text.slice(0, -dotted[1]!.length) +
      `${((v4[0]! << 8) | v4[1]!).toString(16)}:${((v4[2]! << 8) | v4[3]!).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const groups = (s: string | undefined) => (s ? s.split(':') : []);
  const h = groups(head);
  const t = groups(tail);
  const fill = tail === undefined ? [] : Array(8 - h.length - t.length).fill('0');
  const all = [...h, ...fill, ...t];
  if (all.length !== 8) return null;
  return all.flatMap((g) => {
    const n = parseInt(g, 16);
    return [n >> 8, n & 0xff];
  });
}

/**
 * The IPv4 address an IPv6 address carries when it is only a way of writing one (IPv4-mapped ::ffff:a.b.c.d,
 * the NAT64 well-known prefix 64:ff9b::/96, IPv4-compatible ::a.b.c.d, 6to4 2002:AABB:CCDD::), or null.
 */
export function embeddedIpv4(address: string): string | null {
  const b = ipv6Bytes(address);
  if (!b) return null;
  const zeros = (from: number, to: number) => b.slice(from, to).every((x) => x === 0);
  const v4 = (at: number) => b.slice(at, at + 4).join('.');
  if (zeros(0, 10) && b[10] === 0xff && b[11] === 0xff) return v4(12);
  if (b[0] === 0x00 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b && zeros(4, 12)) return v4(12);
  if (zeros(0, 12) && !zeros(12, 14)) return v4(12);
  if (b[0] === 0x20 && b[1] === 0x02) return v4(2);
  return null;
}

/**
 * Why webhooks may not be sent to this IP address ('loopback', 'private', 'link-local', 'carrier-grade NAT',
 * 'unspecified', 'multicast', 'reserved', 'cloud metadata'), or null when it is a public address.
 */
export function refusedAddressClass(address: string): string | null {
  const family = isIP(address);
  if (family === 0) return 'invalid';
  const inner = family === 6 ? embeddedIpv4(address) : null;
  if (inner !== null) return refusedAddressClass(inner);
  const canonical = family === 6 ? address.toLowerCase() : address;
  if (METADATA_ADDRESSES.has(canonical)) return 'cloud metadata';
  for (const [cls, list] of lists) {
    if (list.check(address, family === 4 ? 'ipv4' : 'ipv6')) return cls;
  }
  return null;
}

/** A URL or address webhooks are never sent to; the message says why (a 400 at registration). */
export class RefusedAddressError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RefusedAddressError';
  }
}

/** The host of a URL as DNS and the address rules see it: lowercase, IPv6 brackets removed. */
export function hostOf(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
}

/**
 * The URL's own rules, before any DNS: https (http too when private addresses are allowed), no credentials
 * in it, and not a name that is the metadata service or this machine. Returns the error message or null.
 */
export function urlError(text: string, policy: Pick<AddressPolicy, 'allowPrivate'>): string | null {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'url must be an absolute https:// URL';
  }
  const schemes = policy.allowPrivate ? ['https:', 'http:'] : ['https:'];
  if (!schemes.includes(url.protocol))
    return policy.allowPrivate ? 'url must be an http:// or https:// URL' : 'url must be an https:// URL';
  if (url.username !== '' || url.password !== '') return 'url must not contain a user name or password';
  if (!policy.allowPrivate) {
    const host = hostOf(url);
    if (REFUSED_NAMES.some((re) => re.test(host)))
      return `url host ${host} is refused: webhooks are never sent to this machine or a metadata service`;
  }
  return null;
}

const refusal = (host: string, address: string, cls: string) =>
  host === address
    ? `url host ${address} is a ${cls} address: webhooks are only sent to public addresses`
    : `url host ${host} resolves to a ${cls} address (${address}): webhooks are only sent to public addresses`;

/** Every address of `host` (an IP literal is its own), from WEBHOOK_RESOLVE first, then DNS. */
export async function resolveHost(host: string, policy: AddressPolicy): Promise<LookupAddress[]> {
  const family = isIP(host);
  if (family !== 0) return [{ address: host, family }];
  const pinned = policy.resolve[host];
  if (pinned !== undefined) return [{ address: pinned, family: isIP(pinned) }];
  return dnsLookup(host, { all: true, verbatim: true });
}

/**
 * The addresses of `host`, every one of them checked: throws RefusedAddressError when any is refused (a
 * name with one private address among public ones is refused: the check must not depend on which one a
 * connection would pick) or when the name does not resolve.
 */
export async function checkedAddresses(host: string, policy: AddressPolicy): Promise<LookupAddress[]> {
  let addresses: LookupAddress[];
  try {
    addresses = await resolveHost(host, policy);
  } catch (err) {
    const code = (err as { code?: string }).code ?? 'error';
    throw new RefusedAddressError(`url host ${host} does not resolve (${code})`);
  }
  if (addresses.length === 0) throw new RefusedAddressError(`url host ${host} does not resolve`);
  if (!policy.allowPrivate) {
    for (const a of addresses) {
      const cls = refusedAddressClass(a.address);
      if (cls !== null) throw new RefusedAddressError(refusal(host, a.address, cls));
    }
  }
  return addresses;
}

/** The whole check of a URL an advertiser registers: its own rules, then every address it resolves to. */
export async function checkWebhookUrl(text: string, policy: AddressPolicy): Promise<void> {
  const error = urlError(text, policy);
  if (error !== null) throw new RefusedAddressError(error);
  await checkedAddresses(hostOf(new URL(text)), policy);
}

type LookupCallback = (
  err: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/**
 * A `lookup` for node:http(s) requests: resolves with `checkedAddresses` and hands the connection exactly
 * the addresses it checked. Node calls it with `all: true` when it tries several addresses (autoSelectFamily).
 */
export function guardedLookup(policy: AddressPolicy) {
  return (
    hostname: string,
    options: { all?: boolean; family?: number | string },
    cb: LookupCallback,
  ): void => {
    const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
    checkedAddresses(host, policy).then(
      (addresses) => {
        const family = options.family === 4 || options.family === 6 ? options.family : 0;
        const usable = family === 0 ? addresses : addresses.filter((a) => a.family === family);
        if (usable.length === 0) {
          const err: NodeJS.ErrnoException = new Error(`url host ${host} has no IPv${family} address`);
          err.code = 'ENOTFOUND';
          cb(err, '');
        } else if (options.all) cb(null, usable);
        else cb(null, usable[0]!.address, usable[0]!.family);
      },
      (err: Error) => {
        const e = err as NodeJS.ErrnoException;
        e.code ??= 'EREFUSED_ADDRESS';
        cb(e, '');
      },
    );
  };
}
