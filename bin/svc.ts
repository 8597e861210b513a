#!/usr/bin/env node
// svc: the command-line client of the management API and of test events. It talks HTTP to one base URL
// with a dashboard session (`svc login`) or a management key (--token affk_… / SVC_TOKEN); --json prints
// the API's JSON as is. Run it with `npx svc …` (npm puts the project's Node 24 first on PATH).
// The commands are tables (bin/cli/commands/), `svc <group> <command>` an entry of one; they call the API
// through the dashboard's typed client (bin/cli/context.ts, shared/http/client.ts).
import { ApiError } from '../shared/http/client.ts';
import { CliError, cliErrorOf, o, positionals } from './cli/context.ts';
import type { Commands } from './cli/context.ts';
import { HELP } from './cli/help.ts';
import { sessionCommands } from './cli/commands/session.ts';
import { programCommands } from './cli/commands/programs.ts';
import { payoutCommands } from './cli/commands/payouts.ts';
import { workspaceCommands } from './cli/commands/workspace.ts';
import { trackingCommands } from './cli/commands/tracking.ts';
import { importCommands } from './cli/commands/imports.ts';

const COMMANDS: Commands = {
  ...sessionCommands,
  ...programCommands,
  ...payoutCommands,
  ...workspaceCommands,
  ...trackingCommands,
  ...importCommands,
};

/** The command of the arguments: `<group> <command>` when that is one, else `<group>` (`svc status 12`). */
function commandOf(args: string[]): (() => Promise<void>) | undefined {
  const [group, cmd] = args;
  return (cmd !== undefined ? COMMANDS[`${group} ${cmd}`] : undefined) ?? COMMANDS[group!];
}

async function run(): Promise<void> {
  if (o.help || positionals.length === 0) {
    process.stdout.write(HELP + '\n');
    return;
  }
  const command = commandOf(positionals);
  if (!command) throw new CliError(`unknown command "${positionals.join(' ')}"; see svc --help`);
  await command();
}

try {
  await run();
} catch (err) {
  const e = err instanceof ApiError ? cliErrorOf(err) : err;
  if (e instanceof CliError) {
    process.stderr.write(`svc: ${e.message}\n`);
    process.exit(1);
  }
  throw e;
}
