// The project's kafkajs client: created, configured and logged only here (kafkajs 2.2.4, unmaintained, with
// the project's fixes: createKafka refuses a kafkajs without them, shared/dependency-fixes.ts).
import { Kafka, logLevel as KafkaLogLevel } from 'kafkajs';
import type { logCreator } from 'kafkajs';
import { assertPatched, KAFKAJS } from '../dependency-fixes.ts';
import type { Logger } from '../logger.ts';
import type { Config } from '../config.ts';

// "Not the correct coordinator": the coordinator moved or is going away (a LeaveGroup that reaches a broker
// already shutting down, as after a Ctrl-C, which reaches the broker too); kafkajs looks it up again.
// A group of several members (replicas) rebalances whenever one joins or leaves: kafkajs logs the
// "rebalancing" answers to its heartbeats and syncs as errors, and then rejoins, as it should. "Not aware of
// this member": a consumer rejoining with its old member id (patches/kafkajs+2.2.4.patch) after the
// coordinator forgot it; kafkajs then joins as a new member. "Response without match": the answer to a
// request kafkajs had already given up on (a connection closed under it).
// `write after end`: a socket the broker closed while a request was written (its first seconds after a
// start), retried on a fresh connection; npm start's fresh broker showed it once per worker.
export const TRANSIENT =
  /coordinator is loading|group coordinator is not available|not the correct coordinator|Restarting the consumer|group is rebalancing|not aware of this member|Response without match|write after end/i;
// The broker away (killed, restarting, not yet listening): kafkajs logs every attempt as an error with a
// stack. The project says it once instead (`waiting for kafka`, the producer's circuit), so debug here.
const OUTAGE =
  /ECONNREFUSED|ECONNRESET|Connection error|Connection timeout|Closed connection|KafkaJSConnection|Number of retries exceeded|retries exceeded|broker.*not connected|Failed to connect|disconnected|Crash: KafkaJS/i;

function pinoLogCreator(log: Logger): logCreator {
  return () =>
    ({ level, log: entry }) => {
      // Never a stack trace: kafkajs attaches one to ordinary connection errors.
      const { message, stack: _stack, ...extra } = entry as typeof entry & { stack?: unknown };
      // A group coordinator still loading (every fresh or restarted broker) makes kafkajs retry or restart
      // the consumer, which then succeeds: expected on every start, so debug, not a warning.
      const text = `${message} ${JSON.stringify(extra)}`;
      const transient = level <= KafkaLogLevel.WARN && (TRANSIENT.test(text) || OUTAGE.test(text));
      if (transient) log.debug(extra, `kafka: ${message}`);
      else if (level === KafkaLogLevel.ERROR) log.error(extra, `kafka: ${message}`);
      else if (level === KafkaLogLevel.WARN) log.warn(extra, `kafka: ${message}`);
      else if (level === KafkaLogLevel.INFO) log.debug(extra, `kafka: ${message}`);
      else log.trace(extra, `kafka: ${message}`);
    };
}

/**
 * The process's kafkajs client. Refuses to create one on a kafkajs without the project's fixes
 * (patches/kafkajs+2.2.4.patch; shared/dependency-fixes.ts), naming the missing fix.
 */
export function createKafka(cfg: Pick<Config, 'kafkaBrokers' | 'kafkaClientId'>, log: Logger): Kafka {
  assertPatched(KAFKAJS);
  process.env.KAFKAJS_NO_PARTITIONER_WARNING = '1';
  return new Kafka({
    clientId: cfg.kafkaClientId,
    brokers: cfg.kafkaBrokers,
    logLevel: KafkaLogLevel.INFO,
    logCreator: pinoLogCreator(log),
    // At most 1 s between attempts (connects, metadata, consumer restarts): back within ~1 s of the broker.
    retry: { initialRetryTime: 100, maxRetryTime: 1000, retries: 8 },
  });
}
