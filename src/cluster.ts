/**
 * `price-store/cluster`: several price-store nodes replicating one NATS
 * JetStream stream (see docs/cluster.md).
 */
export { ClusterNode } from './cluster/cluster-node.js'
export { HttpFollowLog } from './cluster/http-follow-log.js'
export type { ClusterOptions } from './cluster/cluster-options.js'
export type { NatsAuth, NatsTls } from './cluster/nats-connection.js'
export type { ReplicationStatus } from './cluster/replication-status.js'
export type { Appended, CommitMessage, LogBounds, ReplicationLog } from './cluster/replication-log.js'
