import type { PeerStatus } from './applied-positions.js'
import type { ResentCommits } from './lost-commits.js'

/** What a cluster node reports about its replication (the HTTP service's `/health`, `/metrics` and `/stats` show it). */
export interface ReplicationStatus {
  /** This node's id in the cluster (`ClusterOptions.nodeId`). */
  readonly node: string
  /**
   * The other nodes this one heard from on the cluster's report subject, with the newest position each applied
   * (newest first); absent on a log without reports (a follower of one primary).
   */
  readonly peers?: readonly PeerStatus[] | undefined
  /**
   * `applying` (connected to the stream, following it), `connecting` (no connection to NATS: reads are served from
   * what this node applied, writes are refused), `isolated` (connected to a NATS server, but the stream has not
   * answered for a while: that server cannot reach the stream's leader, as on the minority side of a partition;
   * reads are served, writes fail), `failed` (applying stopped on an error an operator must handle: see `error`),
   * `stopped`.
   */
  readonly state: 'applying' | 'connecting' | 'isolated' | 'failed' | 'stopped'
  /** The stream's name. */
  readonly stream: string
  /** The newest position applied to this node's store. */
  readonly position: number
  /** The newest commit position of the stream this node knows of (undefined until known). */
  readonly streamPosition?: number | undefined
  /** How far behind the stream this node is, in stream positions (`streamPosition` less the newest position applied or refused). */
  readonly lag?: number | undefined
  /**
   * Milliseconds since this node last heard from the stream (a commit delivered, or an answer to its probe, sent
   * every second): how stale its answers may be. Undefined until it first heard from it.
   */
  readonly heardAgoMs?: number | undefined
  /** Batches applied since this node started. */
  readonly appliedBatches: number
  /** Records applied since this node started. */
  readonly appliedRecords: number
  /** Commits this node refused since it started (see {@link RefusedCommit}). */
  readonly refusedCommits: number
  /** The newest commit it refused, if any. */
  readonly lastRefused?: RefusedCommit | undefined
  /**
   * After this node stopped because the stream lost commits it holds: what it sent to the stream again (absent until
   * the stream took them all).
   */
  readonly resent?: ResentCommits | undefined
  /**
   * True once this node found its history forked from the stream's (see `ClusterOptions.onForked`): it holds other
   * commits than the stream at some positions, after sending its own lost ones again. It applies nothing more; its
   * store must be replaced by one rebuilt from the stream (`serve --nats` does so by itself).
   */
  readonly forked?: boolean | undefined
  /**
   * Times the copy of the stream this node's consumer reads held other commits than the stream's leader (a NATS
   * server left behind by a partition), each time read past from the leader; absent while never.
   */
  readonly leaderReads?: number | undefined
  /** When `state` is `failed`: the error's code and message. */
  readonly error?: { readonly code: string; readonly message: string } | undefined
}

/**
 * A commit of the stream a node passed over without applying it, because of what the message holds: it does not
 * decode (`PRICE_CORRUPT_VALUE`), its bytes do not hash to its id or its parts are not its own (`PRICE_CORRUPT_VALUE`),
 * it names another provider (`PRICE_UNSUPPORTED_PROVIDER`), or the store refuses one of its records
 * (`PRICE_INVALID_RECORD`, `PRICE_INVALID_SIGNATURE`). The verdict depends on the message alone, so every node of a
 * cluster refuses the same commits, and goes on.
 */
export interface RefusedCommit {
  /** The commit's position in the stream. */
  readonly position: number
  readonly code: string
  readonly message: string
}
