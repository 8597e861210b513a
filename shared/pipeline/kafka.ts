// The Kafka module's interface: what the rest of the project uses of Kafka, over @platformatic/kafka. No
// caller sees the client's own types. One module per side, each with its rules written at its top:
//   kafka-client.ts    the client: its settings; refused on a client without the project's fixes
//   kafka-admin.ts     topics created and converged at start; the broker's readiness check; admin calls
//   kafka-producer.ts  the producer: acks all, idempotent, batching, the circuit (fail fast)
//   kafka-consumer.ts  the batch consumer: a chunk committed after its transaction, kept running; dead letters
export { createKafka, KafkaClient } from './kafka-client.ts';
export { ensureTopics, kafkaCheck, KafkaAdmin } from './kafka-admin.ts';
export type { PartitionOffsets, TopicInfo, TopicSpec } from './kafka-admin.ts';
export {
  BatchingProducer,
  connectProducer,
  failsFast,
  ProduceUnavailableError,
  SimpleProducer,
} from './kafka-producer.ts';
export type { BatchingProducerOptions, Message } from './kafka-producer.ts';
export { deadLetterMessage, readTopic, runBatchConsumer } from './kafka-consumer.ts';
export type {
  BatchConsumer,
  ConsumedMessage,
  ConsumerOptions,
  DeadLetterInput,
  Headers,
} from './kafka-consumer.ts';
