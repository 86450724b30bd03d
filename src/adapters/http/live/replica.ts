import { PriceStoreError, describeValue } from '../../../errors.js'
import type { BatchCommit } from '../../../store/price-store.js'
import type { NewPriceRecord } from '../../../types.js'
import type { ReplicationStatus } from '../../../cluster/replication-status.js'
import { MAX_TIMER_MS, checkIntegerOption } from '../../../rules/options.js'

/*
 * A replicated node as the HTTP service sees it: a structural interface, so
 * the adapter needs only types from price-store/cluster (a `ClusterNode`
 * fits) and its tests can use a fake.
 */

export type { ReplicationStatus }

/** A node of a cluster, as the HTTP service uses it. */
export interface ReplicaSource {
  /**
   * Writes a batch through the replication log (validated first, exactly as
   * `PriceStore.putBatch` validates); resolves with `{ stored, position }`
   * once acknowledged (and applied on this node unless configured
   * otherwise). Rejects with PriceStoreError `PRICE_INVALID_RECORD` (same
   * details as `putBatch`), `PRICE_LOG_UNAVAILABLE` (the log cannot be
   * reached or did not acknowledge: nothing or all of the batch may have
   * been written; retry the same batch: it is applied once),
   * `PRICE_WRITE_CONCERN_TIMEOUT` (in the log, but fewer nodes than
   * `writeConcern` applied it in time), `PRICE_REPLICA_FAILED`, `PRICE_NOT_OPEN`.
   */
  putBatch(records: Iterable<NewPriceRecord>, options?: { readonly writeConcern?: number }): Promise<BatchCommit>
  /** The replication state, read without I/O. */
  replication(): ReplicationStatus
  /** Resolves `true` once this node has applied `position`, `false` after `timeoutMs` (or when `signal` aborts). */
  waitForPosition(position: number, timeoutMs: number, signal?: AbortSignal): Promise<boolean>
}

/** Options of a handler in front of a replicated node (part of the handler's options). */
export interface ReplicaOptions {
  /**
   * The cluster node the store is a replica of (a `ClusterNode`): `POST
   * /prices` writes through it (through the replication log), and `/health`,
   * `/metrics` and `/stats` report its replication. Default none: a single
   * node, written directly.
   */
  readonly replica?: ReplicaSource
  /**
   * Largest lag behind the log (`ReplicationStatus.lag`, in positions) with
   * which `/health` still answers 200; past it, 503, so a load balancer
   * stops sending reads to a node that fell behind. Default none.
   */
  readonly maxLag?: number
  /**
   * Longest time since a replicated node last heard from its log
   * (`ReplicationStatus.heardAgoMs`, in ms) with which `/health` still
   * answers 200; past it, 503: the node's answers may be that stale (NATS
   * unreachable, or the node on the minority side of a partition). Default
   * none.
   */
  readonly maxStalenessMs?: number
  /**
   * Longest time a read asking for `minPosition` (or `x-min-position`) waits
   * for a replicated node to apply that position before it is answered 503
   * `HTTP_POSITION_NOT_REACHED` (ms, default {@link DEFAULT_MIN_POSITION_WAIT_MS}).
   * A node without `replica` never waits: its position only moves with its own writes.
   */
  readonly minPositionWaitMs?: number
}

/** Default longest wait of a read for its `minPosition` (ms). */
export const DEFAULT_MIN_POSITION_WAIT_MS = 5_000

/** {@link ReplicaOptions}, checked. */
export interface CheckedReplicaOptions {
  readonly replica?: ReplicaSource | undefined
  /** `Infinity` when none is set. */
  readonly maxLag: number
  /** `Infinity` when none is set. */
  readonly maxStalenessMs: number
  readonly minPositionWaitMs: number
}

/** How far behind its log a node may be and still be fit to serve reads (`Infinity`: no bound). */
export interface ReplicationBounds {
  readonly maxLag: number
  readonly maxStalenessMs: number
}

/**
 * Checks a handler's replica options (the numbers even without a replica,
 * like every other option).
 * @throws PriceStoreError `PRICE_INVALID_OPTIONS`
 */
export function checkReplicaOptions(options: ReplicaOptions): CheckedReplicaOptions {
  const maxLag = checkIntegerOption('maxLag', options.maxLag, Number.POSITIVE_INFINITY, 0, Number.MAX_SAFE_INTEGER)
  const maxStalenessMs = checkIntegerOption('maxStalenessMs', options.maxStalenessMs, Number.POSITIVE_INFINITY, 0, Number.MAX_SAFE_INTEGER)
  const minPositionWaitMs = checkIntegerOption('minPositionWaitMs', options.minPositionWaitMs, DEFAULT_MIN_POSITION_WAIT_MS, 0, MAX_TIMER_MS)
  const { replica } = options
  if (replica !== undefined) {
    const members = replica as unknown as Partial<Record<keyof ReplicaSource, unknown>> | null
    if (typeof members !== 'object' || members === null || typeof members.putBatch !== 'function' || typeof members.replication !== 'function' || typeof members.waitForPosition !== 'function') {
      throw new PriceStoreError(
        'PRICE_INVALID_OPTIONS',
        `option replica must be a cluster node, with putBatch, replication and waitForPosition methods (got ${describeValue(replica)})`,
        { details: { field: 'replica' } },
      )
    }
  }
  return { replica, maxLag, maxStalenessMs, minPositionWaitMs }
}

/**
 * Why a node is not fit to serve reads, from its replication status, or
 * `undefined` when it is: replication failed or stopped, the node is more
 * than `maxLag` positions behind the log, or has not heard from it for more
 * than `maxStalenessMs`. A node that lost its connection (`connecting`,
 * `isolated`) still serves what it applied, so it stays fit within those bounds.
 */
export function replicationProblem(status: ReplicationStatus, { maxLag, maxStalenessMs }: ReplicationBounds): string | undefined {
  if (status.state === 'failed') {
    const code = status.error?.code
    return `replication of the stream ${status.stream} failed${code === undefined ? '' : ` (${code})`}`
  }
  if (status.state === 'stopped') return `replication of the stream ${status.stream} is stopped`
  if (status.lag !== undefined && status.lag > maxLag) {
    return `this node is ${status.lag} positions behind the stream ${status.stream}, more than maxLag ${maxLag}`
  }
  if (Number.isFinite(maxStalenessMs) && (status.heardAgoMs ?? Number.POSITIVE_INFINITY) > maxStalenessMs) {
    const heard = status.heardAgoMs === undefined ? 'has not heard from the stream yet' : `last heard from the stream ${status.heardAgoMs} ms ago`
    return `this node ${heard} (state ${status.state}), more than maxStalenessMs ${maxStalenessMs}`
  }
  return undefined
}

/** What `/stats` adds for a replicated node: where it stands in the cluster. */
export interface ClusterStats {
  readonly stream: string
  readonly state: ReplicationStatus['state']
  readonly position: number
  readonly streamPosition?: number
  readonly lag?: number
  readonly heardAgoMs?: number
  readonly refusedCommits: number
}

/** The `cluster` member of `/stats`, from the node's status (the log's position, the lag and staleness only when known). */
export function clusterStatsOf(status: ReplicationStatus): ClusterStats {
  const { stream, state, position, streamPosition, lag, heardAgoMs, refusedCommits } = status
  return {
    stream,
    state,
    position,
    ...(streamPosition === undefined ? {} : { streamPosition }),
    ...(lag === undefined ? {} : { lag }),
    ...(heardAgoMs === undefined ? {} : { heardAgoMs }),
    refusedCommits,
  }
}
