// Tiny argument parsing shared by the scripts (every script answers --help); integer options follow the
// rule bin/svc.ts shares with them (shared/cli-args.ts).
import { parseArgs } from 'node:util';
import type { ParseArgsConfig } from 'node:util';
import { integerIn } from '../../shared/cli-args.ts';

/**
 * Parses the options (strict; a mistake prints the usage and exits 2, --help prints it and exits 0).
 * `int(name, default, max)` reads an integer option in 1..max the same way; `oneOf(name, default, allowed)`
 * one of a few values.
 */
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
    usageError(usage, (err as Error).message);
  }
  if ((parsed.values as { help?: boolean }).help) {
    process.stdout.write(`${usage}\n`);
    process.exit(0);
  }
  const values = parsed.values as Record<string, unknown>;
  const int = (name: keyof T & string, dflt: number, max: number, min = 1): number => {
    const raw = values[name] as string | undefined;
    if (raw === undefined) return dflt;
    const n = integerIn(raw, min, max);
    if (n === null)
      usageError(usage, `--${name} must be an integer between ${min} and ${max} (got "${raw}")`);
    return n;
  };
  /** An integer option that must be one of `allowed`. */
  const oneOf = (name: keyof T & string, dflt: number, allowed: number[]): number => {
    const n = int(name, dflt, Math.max(...allowed), Math.min(...allowed));
    if (!allowed.includes(n))
      usageError(usage, `--${name} must be one of ${allowed.join(', ')} (got "${n}")`);
    return n;
  };
  return { ...parsed, int, oneOf };
}

function usageError(usage: string, message: string): never {
  process.stderr.write(`${message}\n\n${usage}\n`);
  process.exit(2);
}
