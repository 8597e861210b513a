// Tiny argument parsing shared by the scripts: every script answers --help.
import { parseArgs } from 'node:util';
import type { ParseArgsConfig } from 'node:util';

export function cli<T extends NonNullable<ParseArgsConfig['options']>>(
  usage: string,
  options: T,
  argv = process.argv.slice(2),
) {
  const all = { ...options, help: { type: 'boolean', short: 'h' } } as const;
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: all, allowPositionals: true, strict: true });
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n\n${usage}\n`);
    process.exit(2);
  }
  if ((parsed.values as { help?: boolean }).help) {
    process.stdout.write(`${usage}\n`);
    process.exit(0);
  }
  return parsed;
}

/** An integer option in 1..max (default when absent); anything else prints the usage and exits 2. */
export function intOption(
  usage: string,
  name: string,
  raw: string | undefined,
  dflt: number,
  max: number,
): number {
  if (raw === undefined) return dflt;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > max) {
    process.stderr.write(`--${name} must be an integer between 1 and ${max} (got "${raw}")\n\n${usage}\n`);
    process.exit(2);
  }
  return n;
}
