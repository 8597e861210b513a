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
