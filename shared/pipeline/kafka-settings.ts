// What the Kafka module's clients are made from (kafka-client.ts KafkaClient): the process's brokers and
// client id, and the options every @platformatic/kafka client of the process starts from.
import type { BaseOptions } from '@platformatic/kafka';
import type { Logger } from '../logger.ts';

export interface KafkaSettings {
  readonly brokers: string[];
  readonly clientId: string;
  readonly log: Logger;
  options(extra?: { retries?: number }): BaseOptions;
}
