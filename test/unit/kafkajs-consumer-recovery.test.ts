// The kafkajs consumer's recovery from a broker that died or gave up a partition's leadership
// (patches/kafkajs+2.2.4.patch: "fetch again after a dead leader", "a moved leader needs metadata, not a
// rejoin", "find the coordinator where it moved", "heartbeat the coordinator where it moved"). kafkajs's
// own ConsumerGroup (recoverFromFetch, heartbeat) and OffsetManager.getCoordinator run here on fakes that
// record what they were asked; no network. Unpatched (kafkajs 2.2.4): a dead leader's connection error
// escapes (the consumer crashes and rejoins), a moved leader makes the member rejoin its group (a
// rebalance of every member), and a dead coordinator is committed to and heartbeated where it was, which
// fails until the consumer crashes and rejoins.
import t from 'tap';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
type Recover = (this: unknown, e: Error) => Promise<void>;
type Heartbeats = { heartbeat(opts: { interval: number }): Promise<void>; coordinator: unknown };
const ConsumerGroup = require('kafkajs/src/consumer/consumerGroup.js') as {
  prototype: { recoverFromFetch: Recover };
  new (opts: Record<string, unknown>): Heartbeats & Record<string, unknown>;
};
const OffsetManager = require('kafkajs/src/consumer/offsetManager/index.js') as {
  prototype: { getCoordinator(this: unknown): Promise<unknown> };
};
const errors = require('kafkajs/src/errors.js') as Record<string, new (...args: unknown[]) => Error>;
const { KafkaJSConnectionError, KafkaJSProtocolError, KafkaJSBrokerNotFound } = errors as {
  KafkaJSConnectionError: new (msg: string) => Error;
  KafkaJSProtocolError: new (e: { type: string; code: number; retriable: boolean; message: string }) => Error;
  KafkaJSBrokerNotFound: new (msg: string) => Error;
};

const silent = { debug() {}, info() {}, warn() {}, error() {} };

/** A consumer group as recoverFromFetch sees it: which of its recoveries ran, in order. */
function fakeGroup() {
  const calls: string[] = [];
  return {
    calls,
    groupId: 'g',
    memberId: 'm',
    logger: silent,
    cluster: {
      async refreshMetadata() {
        calls.push('refreshMetadata');
      },
      removeBroker() {
        calls.push('removeBroker');
      },
    },
    async joinAndSync() {
      calls.push('joinAndSync');
    },
  };
}

const protocolError = (type: string, code: number) =>
  new KafkaJSProtocolError({ type, code, retriable: true, message: `${type} (test)` });

t.test('a fetch from a dead leader refreshes the metadata and fetches again, no crash', async (t) => {
  const group = fakeGroup();
  await ConsumerGroup.prototype.recoverFromFetch.call(
    group,
    new KafkaJSConnectionError('Connection error: connect ECONNREFUSED 127.0.0.1:9092'),
  );
  t.same(group.calls, ['refreshMetadata']);
});

for (const [type, code] of [
  ['NOT_LEADER_FOR_PARTITION', 6],
  ['LEADER_NOT_AVAILABLE', 5],
  ['FENCED_LEADER_EPOCH', 74],
  ['UNKNOWN_LEADER_EPOCH', 75],
] as const) {
  t.test(`${type}: the metadata is refreshed and the group is not rejoined`, async (t) => {
    const group = fakeGroup();
    await ConsumerGroup.prototype.recoverFromFetch.call(group, protocolError(type, code));
    t.same(
      group.calls,
      ['refreshMetadata'],
      'no joinAndSync: a JoinGroup from the leader rebalances everyone',
    );
  });
}

t.test('an unknown topic or partition still rejoins (the assignment may have to change)', async (t) => {
  const group = fakeGroup();
  await ConsumerGroup.prototype.recoverFromFetch.call(group, protocolError('UNKNOWN_TOPIC_OR_PARTITION', 3));
  t.same(group.calls, ['refreshMetadata', 'joinAndSync']);
});

t.test('other errors still escape to the runner', async (t) => {
  const group = fakeGroup();
  await t.rejects(
    ConsumerGroup.prototype.recoverFromFetch.call(group, protocolError('CORRUPT_MESSAGE', 2)),
    /CORRUPT_MESSAGE/,
  );
});

/** An offset manager whose coordinator (node 1) is gone; the group's offsets now live on node 2. */
function fakeOffsetManager(findBrokerError: Error | null) {
  const calls: string[] = [];
  const node = (nodeId: number, connected: boolean) => ({ nodeId, isConnected: () => connected });
  return {
    calls,
    groupId: 'g',
    coordinator: node(1, false),
    cluster: {
      async findBroker({ nodeId }: { nodeId: number }) {
        calls.push(`findBroker ${nodeId}`);
        if (findBrokerError) throw findBrokerError;
        return node(nodeId, true);
      },
      async refreshMetadata() {
        calls.push('refreshMetadata');
      },
      async findGroupCoordinator({ groupId }: { groupId: string }) {
        calls.push(`findGroupCoordinator ${groupId}`);
        return node(2, true);
      },
    },
  };
}

for (const [what, err] of [
  ['refuses connections', new KafkaJSConnectionError('Connection error: connect ECONNREFUSED')],
  ['left the metadata', new KafkaJSBrokerNotFound('Broker 1 not found in the cached metadata')],
] as const) {
  t.test(`a commit whose coordinator ${what} asks the cluster for the group's coordinator`, async (t) => {
    const om = fakeOffsetManager(err);
    const coordinator = (await OffsetManager.prototype.getCoordinator.call(om)) as { nodeId: number };
    t.equal(coordinator.nodeId, 2, 'the coordinator the group moved to');
    t.same(om.calls, ['findBroker 1', 'refreshMetadata', 'findGroupCoordinator g']);
  });
}

t.test('a coordinator that reconnects is kept; other errors escape', async (t) => {
  const om = fakeOffsetManager(null);
  const coordinator = (await OffsetManager.prototype.getCoordinator.call(om)) as { nodeId: number };
  t.equal(coordinator.nodeId, 1);
  t.same(om.calls, ['findBroker 1']);
  const bad = fakeOffsetManager(new Error('something else'));
  await t.rejects(OffsetManager.prototype.getCoordinator.call(bad), /something else/);
});

/** A consumer group that joined with node 1 as its coordinator; the group's coordinator is now node 2. */
function groupWithCoordinator(fail: () => Error | null) {
  const sent: string[] = [];
  const coordinator = (nodeId: number) => ({
    nodeId,
    async heartbeat({ memberId, groupGenerationId }: { memberId: string; groupGenerationId: number }) {
      const err = nodeId === 1 ? fail() : null;
      sent.push(`heartbeat ${nodeId} ${memberId} ${groupGenerationId}${err ? ' failed' : ''}`);
      if (err) throw err;
    },
  });
  const logger = { ...silent, namespace: () => silent };
  const group = new ConsumerGroup({
    retry: { retries: 0 },
    cluster: {
      async refreshMetadata() {
        sent.push('refreshMetadata');
      },
      async findGroupCoordinator() {
        sent.push('findGroupCoordinator');
        return coordinator(2);
      },
    },
    groupId: 'g',
    topics: [],
    logger,
    instrumentationEmitter: { emit() {} },
  });
  Object.assign(group, { coordinator: coordinator(1), memberId: 'm-1', generationId: 7, lastRequest: 0 });
  return { group, sent };
}

for (const [what, err] of [
  [
    'is gone (connection refused)',
    () => new KafkaJSConnectionError('Connection error: connect ECONNREFUSED'),
  ],
  ['no longer coordinates the group', () => protocolError('NOT_COORDINATOR_FOR_GROUP', 16)],
] as const) {
  t.test(`a heartbeat whose coordinator ${what} goes to the group's coordinator now`, async (t) => {
    const { group, sent } = groupWithCoordinator(err);
    await group.heartbeat({ interval: 0 });
    t.same(
      sent,
      ['heartbeat 1 m-1 7 failed', 'refreshMetadata', 'findGroupCoordinator', 'heartbeat 2 m-1 7'],
      'the same member and generation: the member keeps its partitions, no rejoin',
    );
    await group.heartbeat({ interval: 0 });
    t.equal(sent.at(-1), 'heartbeat 2 m-1 7', 'and stays with it');
  });
}

t.test('a heartbeat answered with a rebalance still escapes (the runner rejoins)', async (t) => {
  const { group, sent } = groupWithCoordinator(() => protocolError('REBALANCE_IN_PROGRESS', 27));
  await t.rejects(group.heartbeat({ interval: 0 }), /REBALANCE_IN_PROGRESS/);
  t.same(sent, ['heartbeat 1 m-1 7 failed']);
});
