// Starts the local stack: Postgres and Kafka (one broker, or a cluster) in parallel, unless DATABASE_URL /
// KAFKA_BROKERS in the environment point at external servers: the same code then talks to those.
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '../../../shared/logger.ts';
import { clusterReplication, startKafka, startKafkaCluster } from './kafka-server.ts';
import type { KafkaCluster, KafkaServer } from './kafka-server.ts';
import { STACK_DIR, freePort, startPostgres } from './stack.ts';
import type { PostgresServer } from './stack.ts';
import type { ChildServer, Output } from './servers.ts';
import { serverUnit } from './supervisor.ts';
import type { Supervisor } from './supervisor.ts';

export interface Stack {
  databaseUrl: string;
  kafkaBrokers: string;
  postgres: PostgresServer | null;
  /** The embedded single broker; null with a cluster (see `cluster`) or an external KAFKA_BROKERS. */
  kafka: KafkaServer | null;
  /** The embedded cluster of `brokers` > 1; null otherwise. */
  cluster: KafkaCluster | null;
  /** Every embedded Kafka node running now (one, a cluster's, or none). */
  kafkaNodes(): KafkaServer[];
  /**
   * The environment the services need for this Kafka: a cluster's topics are created with replication
   * factor 3 and min.insync.replicas 2 (KAFKA_REPLICATION_FACTOR, KAFKA_MIN_INSYNC_REPLICAS); empty for
   * one broker or an external one (whose own settings then apply).
   */
  kafkaEnv: Record<string, string>;
  stop(): Promise<void>;
}

export interface StackOptions {
  /** Folder for data (under .stack/). */
  name: string;
  /** Folder for data anywhere (instead of .stack/<name>). */
  dir?: string;
  pgPort?: number;
  /** The (first) broker's port; a cluster's node n listens on kafkaPort + 2(n-1), its controller on +1. */
  kafkaPort?: number;
  /** Kafka nodes: 1 (default) or a cluster of 3. */
  brokers?: number;
  fresh?: boolean;
  fast?: boolean;
  env?: Record<string, string | undefined>;
  log: Logger;
  /** Where each server's own output lines go, by its unit name (`postgres`, `kafka`, `kafka-2`). */
  output?: (unit: string) => Output;
}

/** Starts Postgres and Kafka in parallel unless DATABASE_URL / KAFKA_BROKERS point elsewhere. */
export async function startStack(opts: StackOptions): Promise<Stack> {
  const env = opts.env ?? process.env;
  const dir = opts.dir ?? join(STACK_DIR, opts.name);
  if (opts.fresh) await rm(dir, { recursive: true, force: true });
  const brokers = opts.brokers ?? 1;
  // KRaft records the controller endpoints at format time: keep them stable for a persistent data dir.
  const clusterPorts = async () => {
    const ports = [];
    for (let i = 0; i < brokers; i++) {
      ports.push(
        opts.kafkaPort
          ? { port: opts.kafkaPort + 2 * i, controllerPort: opts.kafkaPort + 2 * i + 1 }
          : { port: await freePort(), controllerPort: await freePort() },
      );
    }
    return ports;
  };
  const external = Boolean(env.KAFKA_BROKERS);
  const settled = await Promise.allSettled([
    env.DATABASE_URL
      ? null
      : startPostgres({
          dir: join(dir, 'postgres'),
          port: opts.pgPort ?? (await freePort()),
          database: 'svc',
          fast: opts.fast,
          log: opts.log,
          output: opts.output?.('postgres'),
        }),
    external || brokers > 1
      ? null
      : startKafka({
          dir: join(dir, 'kafka'),
          port: opts.kafkaPort ?? (await freePort()),
          controllerPort: opts.kafkaPort ? opts.kafkaPort + 1 : await freePort(),
          log: opts.log,
          output: opts.output?.('kafka'),
        }),
    external || brokers === 1
      ? null
      : startKafkaCluster({
          dir: join(dir, `kafka-${brokers}`),
          ports: await clusterPorts(),
          log: opts.log,
          output: opts.output && ((node) => opts.output!(`kafka-${node}`)),
        }),
  ]);
  // One that failed (a port in use) stops the others: nothing is left running without its caller.
  const failed = settled.find((r) => r.status === 'rejected');
  if (failed) {
    await Promise.allSettled(settled.map((r) => (r.status === 'fulfilled' ? r.value?.stop() : null)));
    throw failed.reason;
  }
  const [postgres, kafka, cluster] = settled.map((r) => (r as PromiseFulfilledResult<unknown>).value) as [
    PostgresServer | null,
    KafkaServer | null,
    KafkaCluster | null,
  ];
  return {
    databaseUrl: env.DATABASE_URL ?? postgres!.url,
    kafkaBrokers: env.KAFKA_BROKERS ?? kafka?.brokers ?? cluster!.brokers,
    postgres,
    kafka,
    cluster,
    kafkaNodes: () => (cluster ? [...cluster.nodes] : kafka ? [kafka] : []),
    kafkaEnv: cluster ? clusterTopicEnv(brokers) : {},
    stop: async () => {
      await Promise.allSettled([kafka?.stop(), cluster?.stop(), postgres?.stop()]);
    },
  };
}

/** A server of the stack as a supervisor takes it over: its unit name, what logs call it, the process. */
export interface StackServer {
  name: string;
  title: string;
  server: ChildServer;
}

/** The embedded servers running now (none for external ones): Postgres, then each Kafka node. */
export function stackServers(stack: Stack): StackServer[] {
  const servers: StackServer[] = [];
  if (stack.postgres)
    servers.push({
      name: 'postgres',
      title: `postgres (port ${stack.postgres.port})`,
      server: stack.postgres,
    });
  if (stack.kafka)
    servers.push({ name: 'kafka', title: `kafka broker (port ${stack.kafka.port})`, server: stack.kafka });
  for (const [i, node] of (stack.cluster?.nodes ?? []).entries())
    servers.push({
      name: `kafka-${i + 1}`,
      title: `kafka broker ${i + 1} (port ${node.port})`,
      server: node,
    });
  return servers;
}

/** Hands every embedded server of the stack to `supervisor`, which starts each again when it dies. */
export async function superviseStack(
  supervisor: Supervisor,
  stack: Stack,
  logFile: (unit: string) => string,
): Promise<void> {
  for (const s of stackServers(stack)) {
    const unit = serverUnit(s.name, s.title, s.server, logFile(s.name));
    await supervisor.add(unit.spec, unit.running);
  }
}

/** The topic settings of a cluster of `brokers` nodes, as the services read them (shared/config.ts). */
export function clusterTopicEnv(brokers: number): Record<string, string> {
  const { rf, minIsr } = clusterReplication(brokers);
  return { KAFKA_REPLICATION_FACTOR: String(rf), KAFKA_MIN_INSYNC_REPLICAS: String(minIsr) };
}
