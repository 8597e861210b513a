// A stand-in for an IP address that can be compared without keeping the address (review holds compare
// the IP of a partner's sign-ins with the IP of the clicks that earn them commissions). HMAC-SHA256 keyed by
// the installation's `ip_hash` key (0012b_instance_keys.sql): a plain hash of an IPv4 address is reversed
// by trying all 2^32 of them. IPv4-mapped IPv6 addresses hash as their IPv4 form. Pure: the key is read at
// boot by shared/db/instance-keys.ts.
import { createHmac } from 'node:crypto';

export type IpHasher = (ip: string | null | undefined) => string | null;

export function ipHasher(key: Buffer): IpHasher {
  return (ip) => {
    if (!ip) return null;
    const plain = ip.startsWith('::ffff:') && ip.includes('.') ? ip.slice(7) : ip;
    return createHmac('sha256', key).update(plain.toLowerCase()).digest('base64url');
  };
}
