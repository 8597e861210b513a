// Money is integer cents plus an ISO 4217 currency; this is its arithmetic and its bounds.

/**
 * The largest amount in cents a sale or a flat commission may carry: 10^12 (ten billion in the currency's
 * unit). Any more is a typo or an attack, and the bound keeps every bigint sum (daily rollups, balances)
 * out of overflow's reach: about nine million such amounts per program-day or per partner.
 */
export const MAX_AMOUNT_CENTS = 1_000_000_000_000;

/** Round half up of a non-negative rational a*b/c in integer cents, exactly (no floating point). */
export function mulDivRoundHalfUp(a: number, b: number, c: number): number {
  if (c <= 0) throw new RangeError('divisor must be positive');
  const num = BigInt(a) * BigInt(b);
  const q = (num * 2n + BigInt(c)) / (2n * BigInt(c));
  return Number(q);
}

/**
 * Amounts of different currencies are never added together (revenue rollups and balances add sales'
 * amounts), so a sale must be in its program's currency: the 400 for one that is not.
 */
export function currencyMismatch(programCurrency: string): string {
  return `currency must be the program's currency (${programCurrency})`;
}

/** Whether an error string is `currencyMismatch`'s, for any currency. */
export function isCurrencyMismatch(error: unknown): boolean {
  return typeof error === 'string' && /^currency must be the program's currency \([A-Z]{3}\)$/.test(error);
}

/** The ISO 4217 codes the service takes: the runtime's list (Intl), upper case. */
export const CURRENCY_CODES: ReadonlySet<string> = new Set(Intl.supportedValuesOf('currency'));

/**
 * A JSON Schema `pattern` matching exactly the codes of CURRENCY_CODES in any case (JSON Schema patterns
 * have no case-insensitive flag: each letter is a class of both cases); `padded`: surrounding white space
 * allowed too (the service trims it). The OpenAPI's statement of what the currency checks take.
 */
export function currencyPattern(padded: boolean): string {
  const anyCase = (code: string) => [...code].map((c) => `[${c}${c.toLowerCase()}]`).join('');
  const codes = `(?:${[...CURRENCY_CODES].map(anyCase).join('|')})`;
  return padded ? `^\\s*${codes}\\s*$` : `^${codes}$`;
}
