// The Kafka module's interface: what the rest of the project uses of Kafka, over kafkajs 2.2.4 (unmaintained,
// patched: patches/kafkajs+2.2.4.patch). Callers still see a few kafkajs types (Kafka, Message, IHeaders).
// One module per side, each with its rules written at its top:
//   kafka-client.ts    the client: configured and logged; refused on a kafkajs without the project's fixes
//   kafka-admin.ts     topics created and converged at start; the broker's readiness check
//   kafka-producer.ts  the producer: acks -1, not idempotent, batching, the circuit (fail fast)
//   kafka-consumer.ts  the batch consumer: a chunk committed after its transaction, kept running; dead letters
export { createKafka } from './kafka-client.ts';
export { ensureTopics, kafkaCheck } from './kafka-admin.ts';
export { BatchingProducer, connectProducer, failsFast, ProduceUnavailableError } from './kafka-producer.ts';
export type { BatchingProducerOptions } from './kafka-producer.ts';
export { deadLetterMessage, runBatchConsumer, whileHeartbeating } from './kafka-consumer.ts';
export type { BatchConsumer, ConsumedMessage, ConsumerOptions, DeadLetterInput } from './kafka-consumer.ts';
