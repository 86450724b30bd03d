/**
 * `price-store/cluster`: several price-store nodes replicating one NATS
 * JetStream stream (see docs/cluster.md).
 */
export { ClusterNode } from './cluster/cluster-node.js'
export { HttpFollowLog } from './cluster/http-follow-log.js'
export { installRebuilt, isForkedFromStream, rebuildFromStream } from './cluster/rebuild.js'
export type { RebuildOptions, RebuildProgress } from './cluster/rebuild.js'
export { listSnapshots, publishSnapshot, pruneSnapshots } from './cluster/snapshots.js'
export { restoreSnapshot } from './cluster/snapshot-restore.js'
export { snapshotBucketName } from './cluster/snapshot-names.js'
export type { PublishSnapshotOptions, PublishedSnapshot } from './cluster/snapshots.js'
export type { RestoreSnapshotOptions, RestoredSnapshot } from './cluster/snapshot-restore.js'
export type { Snapshot } from './cluster/snapshot-names.js'
export type { SnapshotConnection, SnapshotStreamOptions } from './cluster/snapshot-bucket.js'
export type { SnapshotRetention } from './cluster/snapshot-retention.js'
export type { ClusterOptions, FollowOptions, WriteOptions } from './cluster/cluster-options.js'
export type { ResentCommits } from './cluster/lost-commits.js'
export type { NatsAuth, NatsTls } from './cluster/nats-connection.js'
export type { RefusedCommit, ReplicationStatus } from './cluster/replication-status.js'
export type { Appended, CommitMessage, LogBounds, LogPart, ReplicationLog } from './cluster/replication-log.js'
export type { AppliedReport, PeerStatus } from './cluster/applied-positions.js'
