// The project's Kafka client (@platformatic/kafka): created and configured only here. A KafkaClient is the
// process's connection settings; the admin (kafka-admin.ts), producer (kafka-producer.ts) and consumer
// (kafka-consumer.ts) are each made from it. createKafka refuses a client without the project's fixes
// (patches/@platformatic+kafka+*.patch, shared/dependency-fixes.ts) while any are carried.
import type { BaseOptions } from '@platformatic/kafka';
import { assertPatched, PLATFORMATIC_KAFKA } from '../dependency-fixes.ts';
import type { Logger } from '../logger.ts';
import type { Config } from '../config.ts';
import { KafkaAdmin } from './kafka-admin.ts';
import { SimpleProducer } from './kafka-producer.ts';
import type { SimpleProducerOptions } from './kafka-producer.ts';
import type { KafkaSettings } from './kafka-settings.ts';

/** The process's Kafka settings, from which its admin, producers and consumers are made. */
export class KafkaClient implements KafkaSettings {
  readonly brokers: string[];
  readonly clientId: string;
  readonly log: Logger;

  constructor(brokers: string[], clientId: string, log: Logger) {
    this.brokers = brokers;
    this.clientId = clientId;
    this.log = log;
  }

  /**
   * The options every client of this process starts from. Requests are retried at most 250 ms apart: a
   * request that meets a dead broker (or, in a cluster, a partition whose leadership is moving) goes
   * through within a quarter second of the cluster answering again; `retries` bounds how long (about 10 s
   * by default). Metadata is at most 2 s old, so a moved leader is found without a failed request too.
   */
  options(extra: { retries?: number } = {}): BaseOptions {
    return {
      clientId: this.clientId,
      bootstrapBrokers: this.brokers,
      connectTimeout: 3_000,
      timeout: 10_000,
      retries: extra.retries ?? 40,
      retryDelay: 250,
      metadataMaxAge: 2_000,
      autocreateTopics: false,
    };
  }

  /** An admin client (topics, offsets, groups); lazily connected, closed by `disconnect`. */
  admin(opts: { retries?: number } = {}): KafkaAdmin {
    return new KafkaAdmin(this, opts);
  }

  /** A plain producer (acks all), for scripts and tests; the services use BatchingProducer over it. */
  producer(opts: SimpleProducerOptions = {}): SimpleProducer {
    return new SimpleProducer(this, opts);
  }
}

/**
 * The process's Kafka client. Refuses to create one on a @platformatic/kafka without the project's fixes
 * (shared/dependency-fixes.ts), naming the missing fix.
 */
export function createKafka(cfg: Pick<Config, 'kafkaBrokers' | 'kafkaClientId'>, log: Logger): KafkaClient {
  assertPatched(PLATFORMATIC_KAFKA);
  return new KafkaClient(cfg.kafkaBrokers, cfg.kafkaClientId, log);
}
