#!/usr/bin/env node
// npm postinstall: applies the project's small fixes to installed dependencies, idempotently, and fails
// the install if a fix no longer applies (a dependency upgrade must then be looked at, not ignored).
// Plain JavaScript: it runs under whatever Node npm itself runs on, before the project's Node is usable.
//
// postgres 3.4.9: a write queued with setImmediate can run after the connection closed and dereference a
// null socket, an uncaught TypeError that kills the process (porsager/postgres#1154, #1208; the guard
// proposed upstream in #1209). Guarded so the pending query is rejected with CONNECTION_CLOSED instead,
// which the caller handles like any lost connection.
//
// kafkajs 2.2.4: a consumer that crashed (the broker away) restarts as a NEW group member, and the group's
// coordinator then holds the rebalance until the old member's session expires (KAFKA_SESSION_TIMEOUT_MS,
// 10 s) after the broker's return: measured, a rejoin 10.2 s after the broker listened again. The fix
// rejoins with the member id it had when its leave could not be sent, as the Java client does after a
// lost connection; an id the coordinator forgot is answered UNKNOWN_MEMBER_ID, on which kafkajs already
// clears it and joins as new.
//
// kafkajs 2.2.4: a group member killed with -9 keeps its partitions until the coordinator expires its
// session (KAFKA_SESSION_TIMEOUT_MS): kafkajs has no static membership and no KIP-848 protocol. The admin
// client gains removeGroupMember({ groupId, memberId }): the LeaveGroup request (v3, which names the member)
// a consumer sends for itself on a clean stop, sent by a surviving member for a dead one, so that the
// group rebalances at once (shared/pipeline/liveness.ts, "evict").
//
// kafkajs 2.2.4: a fetch from a broker that is gone (connection refused: a cluster node killed) is not
// recovered like a closed connection: the consumer retries the same dead broker from its cached metadata,
// crashes after its retries and restarts as a group member whose partitions nobody serves meanwhile
// (seen in `npm run chaos -- --cluster`: commands answered 503 for 3-8 s after a broker kill). The fix
// refreshes the metadata and fetches again (200 ms apart), as for a closed connection and as the Java
// client does for a disconnected leader: the new leaders are used as soon as the controller elects them.
//
// kafkajs 2.2.4: a fetch answered "not the leader" (a leader moved: a broker's controlled shutdown, a
// preferred leader brought back) makes the consumer rejoin its group after refreshing the metadata, and a
// JoinGroup from the group's leader member rebalances the whole group: every member stops and rejoins,
// seconds of nothing fetched for one partition that moved (seen in chaos --cluster's rolling restart: a
// sale answered after 2.9 s as the next broker shut down). The fix refreshes the metadata and fetches from
// the new leader, as the Java client does; the other errors that list covers (a topic or partition
// unknown) still rejoin.
//
// kafkajs 2.2.4: a consumer heartbeats the group coordinator it found when it joined; once that broker is
// gone (or answers that it no longer coordinates the group) the heartbeat fails until the consumer
// crashes and rejoins, and its JoinGroup rebalances the group: every member's partitions idle meanwhile
// (seen in chaos --cluster's controller kill: sales answered 503 "no live consumer" 5 s after the kill).
// The fix asks the cluster for the group's coordinator again and heartbeats it there; the new coordinator
// loaded the group's members and generation from __consumer_offsets, so the member keeps its partitions.
//
// kafkajs 2.2.4: the offset manager commits to the group coordinator it found when the group was joined;
// once that broker is gone it looks it up again by node id, in metadata that still names the dead node or
// no longer has it ("Broker 1 not found in the cached metadata"), so every commit fails until the consumer
// crashes and rejoins. The fix asks the cluster for the group's coordinator again (FindCoordinator), which
// names the broker the group's offsets partition moved to.
//
// kafkajs 2.2.4: the request queue schedules its throttle check with a negative delay when it was never
// throttled; Node 24 prints a TimeoutNegativeWarning for it on every start. Node already runs such a timer
// after 1 ms, so the fix passes 1 ms explicitly: same behaviour, no warning.
//
// kafkajs 2.2.4: a send that failed on one broker is retried only to brokers that had not answered yet. When
// a partition's leader moved to a broker that had already acknowledged the send's other partitions (a broker
// killed, its partitions led by a survivor), that partition's messages were never sent again and the send
// resolved anyway: acknowledged messages lost (seen as clicks answered 200 and never stored in the cluster
// chaos run). The fix keeps the acknowledgements per partition: a retry sends every partition not yet
// acknowledged to its current leader, whoever answered before; the messages' partitions are fixed at the
// first attempt; a partition without a known leader is a retriable error, not a silent skip.
// test/unit/kafkajs-send-retry.test.ts.
import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

if (process.argv.includes('--help') || process.argv.includes('-h')) {
  console.log(
    'Usage: node scripts/patch-deps.mjs\n\nRun by npm after install: applies the fixes listed in this file to node_modules.',
  );
  process.exit(0);
}

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const fixes = [
  {
    mark: '/* svc: guarded (postgres#1208) */',
    files: ['src/connection.js', 'cjs/src/connection.js', 'cf/src/connection.js'].map((f) =>
      join(root, 'node_modules', 'postgres', f),
    ),
    find: '  function nextWrite(fn) {\n',
    replace:
      '  function nextWrite(fn) {\n' +
      '    if (!socket) { /* svc: guarded (postgres#1208) */\n' +
      '      nextWriteTimer !== null && clearImmediate(nextWriteTimer)\n' +
      '      chunk = nextWriteTimer = null\n' +
      "      error(Errors.connection('CONNECTION_CLOSED', options, socket))\n" +
      '      return false\n' +
      '    }\n',
  },
  {
    mark: '/* svc: no negative timeout */',
    files: [join(root, 'node_modules', 'kafkajs', 'src', 'network', 'requestQueue', 'index.js')],
    find: '      }, scheduleAt)\n',
    replace: '      }, Math.max(1, scheduleAt)) /* svc: no negative timeout */\n',
  },
  {
    mark: '/* svc: rejoin as the same member (declare) */',
    files: [join(root, 'node_modules', 'kafkajs', 'src', 'consumer', 'index.js')],
    find: '  let restartTimeout = null\n',
    replace:
      '  let restartTimeout = null\n  let rejoinAs = null /* svc: rejoin as the same member (declare) */\n',
  },
  {
    mark: '/* svc: rejoin as the same member (keep) */',
    files: [join(root, 'node_modules', 'kafkajs', 'src', 'consumer', 'index.js')],
    find: '      await disconnect()\n',
    replace:
      '      const crashed = consumerGroup /* svc: rejoin as the same member (keep) */\n' +
      '      await disconnect()\n' +
      '      rejoinAs = crashed ? crashed.memberId : null\n',
  },
  {
    mark: '/* svc: rejoin as the same member (use) */',
    files: [join(root, 'node_modules', 'kafkajs', 'src', 'consumer', 'index.js')],
    find: '      runner = new Runner({\n',
    replace:
      '      if (rejoinAs) consumerGroup.memberId = rejoinAs /* svc: rejoin as the same member (use) */\n' +
      '      rejoinAs = null\n' +
      '      runner = new Runner({\n',
  },
  {
    mark: '/* svc: remove a dead group member (define) */',
    files: [join(root, 'node_modules', 'kafkajs', 'src', 'admin', 'index.js')],
    find: '  const deleteGroups = async groupIds => {\n',
    replace:
      '  const removeGroupMember = async ({ groupId, memberId }) => {' +
      ' /* svc: remove a dead group member (define) */\n' +
      '    const coordinator = await cluster.findGroupCoordinator({ groupId })\n' +
      '    return coordinator.leaveGroup({ groupId, memberId })\n' +
      '  }\n\n' +
      '  const deleteGroups = async groupIds => {\n',
  },
  {
    mark: '/* svc: remove a dead group member (export) */',
    files: [join(root, 'node_modules', 'kafkajs', 'src', 'admin', 'index.js')],
    find: '    deleteGroups,\n',
    replace: '    deleteGroups,\n    removeGroupMember, /* svc: remove a dead group member (export) */\n',
  },
  {
    mark: '/* svc: fetch again after a dead leader */',
    files: [join(root, 'node_modules', 'kafkajs', 'src', 'consumer', 'consumerGroup.js')],
    find: "    if (e.name === 'KafkaJSConnectionClosedError') {\n      this.cluster.removeBroker",
    replace:
      "    if (e.name === 'KafkaJSConnectionError') { /* svc: fetch again after a dead leader */\n" +
      '      this.logger.debug(`${e.message}, refreshing metadata and retrying...`)\n' +
      '      await sleep(200)\n' +
      '      await this.cluster.refreshMetadata()\n' +
      '      return\n' +
      '    }\n\n' +
      "    if (e.name === 'KafkaJSConnectionClosedError') {\n      this.cluster.removeBroker",
  },
  {
    mark: '/* svc: a moved leader needs metadata, not a rejoin */',
    files: [join(root, 'node_modules', 'kafkajs', 'src', 'consumer', 'consumerGroup.js')],
    find: '  async recoverFromFetch(e) {\n',
    replace:
      '  async recoverFromFetch(e) {\n' +
      "    if (['LEADER_NOT_AVAILABLE', 'NOT_LEADER_FOR_PARTITION', 'FENCED_LEADER_EPOCH', 'UNKNOWN_LEADER_EPOCH']" +
      '.includes(e.type)) { /* svc: a moved leader needs metadata, not a rejoin */\n' +
      '      this.logger.debug(`${e.message}, refreshing metadata and fetching again`)\n' +
      '      await sleep(100)\n' +
      '      await this.cluster.refreshMetadata()\n' +
      '      return\n' +
      '    }\n\n',
  },
  {
    mark: '/* svc: heartbeat the coordinator where it moved */',
    files: [join(root, 'node_modules', 'kafkajs', 'src', 'consumer', 'consumerGroup.js')],
    find: '        await this.coordinator.heartbeat(payload)\n',
    replace:
      '        try {\n' +
      '          await this.coordinator.heartbeat(payload)\n' +
      '        } catch (e) { /* svc: heartbeat the coordinator where it moved */\n' +
      "          if (!['KafkaJSConnectionError', 'KafkaJSConnectionClosedError'].includes(e.name) &&\n" +
      "            !['NOT_COORDINATOR_FOR_GROUP', 'GROUP_COORDINATOR_NOT_AVAILABLE'].includes(e.type)) throw e\n" +
      '          await this.cluster.refreshMetadata()\n' +
      '          this.coordinator = await this.cluster.findGroupCoordinator({ groupId })\n' +
      '          await this.coordinator.heartbeat(payload)\n' +
      '        }\n',
  },
  {
    mark: '/* svc: find the coordinator where it moved */',
    files: [join(root, 'node_modules', 'kafkajs', 'src', 'consumer', 'offsetManager', 'index.js')],
    find:
      '    if (!this.coordinator.isConnected()) {\n' +
      '      this.coordinator = await this.cluster.findBroker(this.coordinator)\n' +
      '    }\n',
    replace:
      '    if (!this.coordinator.isConnected()) {\n' +
      '      try {\n' +
      '        this.coordinator = await this.cluster.findBroker(this.coordinator)\n' +
      '      } catch (e) { /* svc: find the coordinator where it moved */\n' +
      "        if (e.name !== 'KafkaJSConnectionError' && e.name !== 'KafkaJSBrokerNotFound') throw e\n" +
      '        await this.cluster.refreshMetadata()\n' +
      '        this.coordinator = await this.cluster.findGroupCoordinator({ groupId: this.groupId })\n' +
      '      }\n' +
      '    }\n',
  },
  {
    mark: '/* svc: acknowledged per partition (declare) */',
    files: [join(root, 'node_modules', 'kafkajs', 'src', 'producer', 'sendMessages.js')],
    find: '    const responsePerBroker = new Map()\n',
    replace:
      '    const responsePerBroker = new Map()\n' +
      '    const ackedPartitions = new Set() /* svc: acknowledged per partition (declare) */\n' +
      '    const assignedPartitions = new Map()\n',
  },
  {
    mark: '/* svc: acknowledged per partition (assign) */',
    files: [join(root, 'node_modules', 'kafkajs', 'src', 'producer', 'sendMessages.js')],
    find:
      '        const messagesPerPartition = groupMessagesPerPartition({\n' +
      '          topic,\n' +
      '          partitionMetadata,\n' +
      '          messages,\n' +
      '          partitioner,\n' +
      '        })\n\n' +
      '        const partitions = keys(messagesPerPartition)\n' +
      '        const partitionsPerLeader = cluster.findLeaderForPartitions(topic, partitions)\n',
    replace:
      '        if (!assignedPartitions.has(topic)) { /* svc: acknowledged per partition (assign) */\n' +
      '          assignedPartitions.set(topic, groupMessagesPerPartition({ topic, partitionMetadata, messages, partitioner }))\n' +
      '        }\n' +
      '        const messagesPerPartition = assignedPartitions.get(topic)\n' +
      '        const partitions = keys(messagesPerPartition).filter(p => !ackedPartitions.has(`${topic}:${p}`))\n' +
      '        const partitionsPerLeader = cluster.findLeaderForPartitions(topic, partitions)\n' +
      '        const placed = new Set(Object.values(partitionsPerLeader).flat().map(String))\n' +
      '        if (partitions.some(p => !placed.has(String(p)))) {\n' +
      "          throw new KafkaJSMetadataNotLoaded('No leader known for a partition of the send')\n" +
      '        }\n',
  },
  {
    mark: '/* svc: acknowledged per partition (send) */',
    files: [join(root, 'node_modules', 'kafkajs', 'src', 'producer', 'sendMessages.js')],
    find: '      const brokersWithoutResponse = brokers.filter(broker => !responsePerBroker.get(broker))\n',
    replace:
      '      const leading = brokers.filter(broker => /* svc: acknowledged per partition (send) */\n' +
      '        Array.from(topicMetadata.values()).some(({ partitionsPerLeader }) => !!partitionsPerLeader[broker.nodeId])\n' +
      '      )\n' +
      '      const brokersWithoutResponse = Array.from(new Map(leading.map(b => [b.nodeId, b])).values())\n',
  },
  {
    mark: '/* svc: acknowledged per partition (record) */',
    files: [join(root, 'node_modules', 'kafkajs', 'src', 'producer', 'sendMessages.js')],
    find: '          responsePerBroker.set(broker, formattedResponse)\n',
    replace:
      '          responsePerBroker.set(broker, [...(responsePerBroker.get(broker) || []), ...formattedResponse])\n' +
      '          topicData.forEach(({ topic, partitions }) => /* svc: acknowledged per partition (record) */\n' +
      '            partitions.forEach(entry => ackedPartitions.add(`${topic}:${entry.partition}`))\n' +
      '          )\n',
  },
  {
    mark: '/* svc: acknowledged per partition (keep) */',
    files: [join(root, 'node_modules', 'kafkajs', 'src', 'producer', 'sendMessages.js')],
    find: '          responsePerBroker.delete(broker)\n',
    replace:
      '          if (!responsePerBroker.get(broker)) responsePerBroker.delete(broker) /* svc: acknowledged per partition (keep) */\n',
  },
  {
    mark: '/* svc: acknowledged per partition (result) */',
    files: [join(root, 'node_modules', 'kafkajs', 'src', 'producer', 'sendMessages.js')],
    find: '        return Array.from(responsePerBroker.values()).flat()\n',
    replace:
      '        return Array.from(responsePerBroker.values()).filter(Boolean).flat() /* svc: acknowledged per partition (result) */\n',
  },
];

let failed = false;
for (const fix of fixes) {
  for (const file of fix.files) {
    if (!existsSync(file)) continue;
    const text = readFileSync(file, 'utf8');
    if (text.includes(fix.mark)) continue;
    if (!text.includes(fix.find)) {
      console.error(`patch-deps: ${file} no longer has the code this fix expects; review the fix`);
      failed = true;
      continue;
    }
    writeFileSync(file, text.replace(fix.find, fix.replace));
  }
}
process.exit(failed ? 1 : 0);
