// The installation's secret keys (instance_keys, 0012b_instance_keys.sql), read once at boot: the `ip_hash`
// key of the IP hasher (shared/domain/ip-hash.ts, which stays pure).
import type { Sql } from './sql.ts';
import { ipHasher } from '../domain/ip-hash.ts';
import type { IpHasher } from '../domain/ip-hash.ts';

/** The installation's IP hasher (reads the key once; call at boot). */
export async function loadIpHasher(sql: Sql): Promise<IpHasher> {
  const [row] = await sql<{ value: Buffer }[]>`select value from instance_keys where name = 'ip_hash'`;
  if (!row) throw new Error('instance key ip_hash is missing: run the migrations');
  return ipHasher(row.value);
}
