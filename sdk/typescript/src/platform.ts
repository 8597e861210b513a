// What the SDK takes from its runtime: Web Crypto (random ids, HMAC). Global in browsers, edge runtimes,
// Deno, Bun and Node 19+; Node 18 has it only as node:crypto's `webcrypto`, loaded here when the global is
// missing (through a variable specifier, so bundlers for edge runtimes do not try to resolve node:crypto).

/** The global `crypto` object's type (from the DOM library, or from @types/node in the project's tests). */
type WebCrypto = typeof globalThis.crypto;

let loaded: Promise<WebCrypto> | null = null;

export function webCrypto(): Promise<WebCrypto> {
  if (loaded === null) {
    const global = (globalThis as { crypto?: WebCrypto }).crypto;
    if (global?.subtle) loaded = Promise.resolve(global);
    else {
      const specifier = 'node:crypto';
      loaded = (import(specifier) as Promise<{ webcrypto: WebCrypto }>).then((m) => m.webcrypto);
    }
  }
  return loaded;
}

/** A random UUID (version 4): Idempotency-Keys and click event_ids. */
export async function randomId(): Promise<string> {
  const crypto = await webCrypto();
  if (typeof crypto.randomUUID === 'function') return crypto.randomUUID();
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = (b[6]! & 0x0f) | 0x40;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const hex = Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
