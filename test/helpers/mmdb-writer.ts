// Minimal MaxMind DB (MMDB v2) writer for tests.
//
// Spec: https://maxmind.github.io/MaxMind-DB/
// Layout of a file: [binary search tree][16 zero bytes][data section]["\xAB\xCD\xEFMaxMind.com"][metadata map]
//
// Supported: ip_version 4 or 6 (IPv4 networks go under ::/96 in an IPv6 tree, which is where readers
// look for them), record sizes 24/28/32, and these data types: utf8 string, double, bytes, uint16,
// uint32, map, int32, uint64, array, boolean. No pointers are emitted (identical records are
// de-duplicated at the top level only), which the format allows.
import net from 'node:net';

export type MmdbValue =
  string | number | bigint | boolean | Uint8Array | MmdbValue[] | { readonly [key: string]: MmdbValue };

export interface MmdbNetwork {
  /** CIDR, e.g. `1.2.3.0/24` or `2a01:4f8::/32`. */
  network: string;
  data: MmdbValue;
}

export interface MmdbWriterOptions {
  ipVersion?: 4 | 6;
  recordSize?: 24 | 28 | 32;
  databaseType?: string;
  languages?: string[];
  description?: Record<string, string>;
  buildEpoch?: number;
  /** ip_version 6 only: alias ::ffff:0:0/96 to the IPv4 subtree (default true, as MaxMind does). */
  aliasIpv4Mapped?: boolean;
}

// --- data section encoding -------------------------------------------------------------------------

const T_UTF8 = 2;
const T_DOUBLE = 3;
const T_BYTES = 4;
const T_UINT16 = 5;
const T_UINT32 = 6;
const T_MAP = 7;
const T_INT32 = 8;
const T_UINT64 = 9;
const T_ARRAY = 11;
const T_BOOLEAN = 14;

function controlBytes(type: number, size: number): Buffer {
  const parts: number[] = [];
  let sizeBits: number;
  const extra: number[] = [];
  if (size < 29) {
    sizeBits = size;
  } else if (size < 29 + 256) {
    sizeBits = 29;
    extra.push(size - 29);
  } else if (size < 285 + 65536) {
    sizeBits = 30;
    const v = size - 285;
    extra.push((v >> 8) & 0xff, v & 0xff);
  } else if (size < 65821 + 16777216) {
    sizeBits = 31;
    const v = size - 65821;
    extra.push((v >> 16) & 0xff, (v >> 8) & 0xff, v & 0xff);
  } else {
    throw new RangeError(`mmdb value too large: ${size}`);
  }
  if (type <= 7) {
    parts.push((type << 5) | sizeBits);
  } else {
    // Extended type: type bits are 0 and the next byte holds (type - 7).
    parts.push(sizeBits, type - 7);
  }
  return Buffer.from([...parts, ...extra]);
}

function uintBytes(value: bigint, maxBytes: number): Buffer {
  const out: number[] = [];
  let v = value;
  while (v > 0n) {
    out.unshift(Number(v & 0xffn));
    v >>= 8n;
  }
  if (out.length > maxBytes) throw new RangeError(`value ${value} does not fit in ${maxBytes} bytes`);
  return Buffer.from(out);
}

export function encodeValue(value: MmdbValue): Buffer {
  if (typeof value === 'string') {
    const body = Buffer.from(value, 'utf8');
    return Buffer.concat([controlBytes(T_UTF8, body.length), body]);
  }
  if (typeof value === 'boolean') {
    return controlBytes(T_BOOLEAN, value ? 1 : 0);
  }
  if (typeof value === 'bigint') {
    if (value < 0n) throw new RangeError('negative bigint is not supported');
    const body = uintBytes(value, 8);
    return Buffer.concat([controlBytes(T_UINT64, body.length), body]);
  }
  if (typeof value === 'number') {
    if (Number.isInteger(value) && value >= 0 && value <= 0xffff) {
      const body = uintBytes(BigInt(value), 2);
      return Buffer.concat([controlBytes(T_UINT16, body.length), body]);
    }
    if (Number.isInteger(value) && value >= 0 && value <= 0xffffffff) {
      const body = uintBytes(BigInt(value), 4);
      return Buffer.concat([controlBytes(T_UINT32, body.length), body]);
    }
    if (Number.isInteger(value) && value < 0 && value >= -0x80000000) {
      const body = Buffer.alloc(4);
      body.writeInt32BE(value);
      return Buffer.concat([controlBytes(T_INT32, 4), body]);
    }
    const body = Buffer.alloc(8);
    body.writeDoubleBE(value);
    return Buffer.concat([controlBytes(T_DOUBLE, 8), body]);
  }
  if (value instanceof Uint8Array) {
    return Buffer.concat([controlBytes(T_BYTES, value.length), Buffer.from(value)]);
  }
  if (Array.isArray(value)) {
    return Buffer.concat([controlBytes(T_ARRAY, value.length), ...value.map(encodeValue)]);
  }
  const entries = Object.entries(value);
  const parts: Buffer[] = [controlBytes(T_MAP, entries.length)];
  for (const [k, v] of entries) parts.push(encodeValue(k), encodeValue(v));
  return Buffer.concat(parts);
}

// --- search tree -----------------------------------------------------------------------------------

interface TreeNode {
  records: [Slot, Slot];
}
type Slot = TreeNode | DataRef | null;
interface DataRef {
  offset: number;
}

function isNode(s: Slot): s is TreeNode {
  return s !== null && 'records' in s;
}

function parseNetwork(cidr: string, ipVersion: 4 | 6): { bits: number[]; prefix: number } {
  const [addr, prefixText] = cidr.split('/');
  if (addr === undefined || prefixText === undefined) throw new Error(`bad network: ${cidr}`);
  const prefix = Number(prefixText);
  const family = net.isIP(addr);
  let bytes: number[];
  let len: number;
  if (family === 4) {
    if (!(prefix >= 0 && prefix <= 32)) throw new Error(`bad prefix: ${cidr}`);
    const v4 = addr.split('.').map(Number);
    if (ipVersion === 4) {
      bytes = v4;
      len = prefix;
    } else {
      bytes = [...new Array<number>(12).fill(0), ...v4];
      len = 96 + prefix;
    }
  } else if (family === 6) {
    if (ipVersion === 4) throw new Error(`IPv6 network in an ip_version 4 database: ${cidr}`);
    if (!(prefix >= 0 && prefix <= 128)) throw new Error(`bad prefix: ${cidr}`);
    bytes = ipv6Bytes(addr);
    len = prefix;
  } else {
    throw new Error(`bad address: ${cidr}`);
  }
  const bits: number[] = [];
  for (let i = 0; i < len; i++) bits.push(((bytes[i >> 3] ?? 0) >> (7 - (i & 7))) & 1);
  return { bits, prefix: len };
}

function ipv6Bytes(addr: string): number[] {
  let text = addr;
  if (text.includes('.')) {
    // Embedded dotted quad (e.g. `::ffff:1.2.3.4`): rewrite it as two hex groups.
    const at = text.lastIndexOf(':');
    const [a = 0, b = 0, c = 0, d = 0] = text
      .slice(at + 1)
      .split('.')
      .map(Number);
    text = `${text.slice(0, at + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const halves = text.split('::');
  const head = halves[0] ? halves[0].split(':') : [];
  const tail = halves.length > 1 && halves[1] ? halves[1].split(':') : [];
  const fill = halves.length > 1 ? 8 - head.length - tail.length : 0;
  const groups = [...head, ...new Array<string>(fill).fill('0'), ...tail];
  if (groups.length !== 8) throw new Error(`bad IPv6 address: ${addr}`);
  const out: number[] = [];
  for (const g of groups) {
    const v = parseInt(g, 16);
    out.push((v >> 8) & 0xff, v & 0xff);
  }
  return out;
}

function insert(root: TreeNode, bits: number[], value: DataRef | TreeNode): void {
  if (bits.length === 0) throw new Error('a /0 network is not supported');
  let node = root;
  for (let i = 0; i < bits.length; i++) {
    const bit = bits[i] as 0 | 1;
    if (i === bits.length - 1) {
      node.records[bit] = value;
      return;
    }
    const next = node.records[bit];
    if (isNode(next)) {
      node = next;
    } else {
      // Empty or a shorter network's data: split so the shorter network keeps covering the rest.
      const child: TreeNode = { records: [next, next] };
      node.records[bit] = child;
      node = child;
    }
  }
}

function writeRecordPair(
  buf: Buffer,
  at: number,
  recordSize: 24 | 28 | 32,
  left: number,
  right: number,
): void {
  if (recordSize === 24) {
    buf.writeUIntBE(left, at, 3);
    buf.writeUIntBE(right, at + 3, 3);
  } else if (recordSize === 28) {
    buf.writeUIntBE(left & 0xffffff, at, 3);
    buf[at + 3] = (((left >>> 24) & 0x0f) << 4) | ((right >>> 24) & 0x0f);
    buf.writeUIntBE(right & 0xffffff, at + 4, 3);
  } else {
    buf.writeUInt32BE(left, at);
    buf.writeUInt32BE(right, at + 4);
  }
}

/** Builds a complete .mmdb file in memory. */
export function buildMmdb(networks: MmdbNetwork[], opts: MmdbWriterOptions = {}): Buffer {
  const ipVersion = opts.ipVersion ?? 6;
  const recordSize = opts.recordSize ?? 24;

  // Data section: one encoded value per distinct record.
  const dataParts: Buffer[] = [];
  const dataOffsets = new Map<string, DataRef>();
  let dataLength = 0;
  const root: TreeNode = { records: [null, null] };
  // Least specific first, so a more specific network splits a broader one instead of being overwritten.
  const parsed = networks
    .map(({ network, data }) => ({ data, ...parseNetwork(network, ipVersion) }))
    .sort((a, b) => a.prefix - b.prefix);
  for (const { data, bits } of parsed) {
    const key = JSON.stringify(data, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v));
    let ref = dataOffsets.get(key);
    if (!ref) {
      const encoded = encodeValue(data);
      ref = { offset: dataLength };
      dataOffsets.set(key, ref);
      dataParts.push(encoded);
      dataLength += encoded.length;
    }
    insert(root, bits, ref);
  }

  // Like MaxMind's own databases: make ::ffff:0:0/96 (IPv4-mapped) an alias of the IPv4 subtree at ::/96.
  if (ipVersion === 6 && (opts.aliasIpv4Mapped ?? true)) {
    let ipv4Root: Slot = root;
    for (let i = 0; i < 96 && isNode(ipv4Root); i++) ipv4Root = ipv4Root.records[0];
    if (isNode(ipv4Root)) {
      const mappedBits = [...new Array<number>(80).fill(0), ...new Array<number>(16).fill(1)];
      insert(root, mappedBits, ipv4Root);
    }
  }

  // Number the nodes breadth-first; the root must be node 0.
  const order: TreeNode[] = [];
  const ids = new Map<TreeNode, number>();
  const queue: TreeNode[] = [root];
  while (queue.length > 0) {
    const node = queue.shift() as TreeNode;
    if (ids.has(node)) continue;
    ids.set(node, order.length);
    order.push(node);
    for (const r of node.records) if (isNode(r) && !ids.has(r)) queue.push(r);
  }
  const nodeCount = order.length;
  const maxRecord = 2 ** recordSize - 1;

  const recordValue = (slot: Slot): number => {
    let v: number;
    if (slot === null) v = nodeCount;
    else if (isNode(slot)) v = ids.get(slot) as number;
    else v = nodeCount + 16 + slot.offset;
    if (v > maxRecord) throw new RangeError(`record value ${v} does not fit in ${recordSize} bits`);
    return v;
  };

  const nodeBytes = (recordSize * 2) / 8;
  const tree = Buffer.alloc(nodeCount * nodeBytes);
  order.forEach((node, i) => {
    writeRecordPair(
      tree,
      i * nodeBytes,
      recordSize,
      recordValue(node.records[0]),
      recordValue(node.records[1]),
    );
  });

  const metadata = encodeValue({
    node_count: nodeCount,
    record_size: recordSize,
    ip_version: ipVersion,
    database_type: opts.databaseType ?? 'Test-City',
    languages: opts.languages ?? ['en'],
    binary_format_major_version: 2,
    binary_format_minor_version: 0,
    build_epoch: BigInt(opts.buildEpoch ?? Math.floor(Date.now() / 1000)),
    description: opts.description ?? { en: 'test database' },
  });

  return Buffer.concat([
    tree,
    Buffer.alloc(16),
    ...dataParts,
    Buffer.from([0xab, 0xcd, 0xef]),
    Buffer.from('MaxMind.com', 'ascii'),
    metadata,
  ]);
}
