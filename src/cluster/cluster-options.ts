/** The options of a cluster node, and their defaults. */
import { randomBytes } from 'node:crypto'
import { hostname } from 'node:os'
import { PriceStoreError } from '../errors.js'
import { MAX_TIMER_MS, checkIntegerOption } from '../rules/options.js'
import { isNodeId, nodeIdOf } from './applied-positions.js'
import type { ResentCommits } from './lost-commits.js'
import type { RefusedCommit } from './replication-status.js'
import type { JetStreamLogOptions } from './jetstream-log.js'
import { resolveNatsSecurity, type NatsAuth, type NatsTls } from './nats-connection.js'

/** Options of {@link ClusterNode.start}. */
export interface ClusterOptions {
  /**
   * NATS server URLs (`nats://host:port`; `tls://host:port` asks for TLS), one or several of the cluster's; a
   * comma-separated string is split. A `user:password@` (or `token@`) in a URL is taken as `auth` and never printed.
   */
  readonly servers: string | readonly string[]
  /** How this node proves who it is to NATS (default: none). See docs/cluster.md#secure-deployment. */
  readonly auth?: NatsAuth
  /** TLS to the NATS servers (default: off unless a URL is `tls://` or a server requires it). */
  readonly tls?: NatsTls
  /** The JetStream stream that is the cluster's log (default `PRICES`): letters, digits, `-` and `_`. */
  readonly stream?: string
  /**
   * Servers each message of the stream is stored on, used when this node creates the stream (default 3 when
   * three or more servers are given, else 1). An existing stream keeps its own.
   */
  readonly replicas?: number
  /** The stream's retention by age (ms, default 0: none), used when this node creates the stream. See docs/cluster.md. */
  readonly maxAgeMs?: number
  /** The stream's retention by size (bytes, default 0: none), used when this node creates the stream. */
  readonly maxBytes?: number
  /** How long JetStream recognises a retried publish of the same batch (ms, default 120,000). */
  readonly duplicateWindowMs?: number
  /** Time a write waits for JetStream's acknowledgement before failing with `PRICE_LOG_UNAVAILABLE` (ms, default 5,000). */
  readonly publishTimeoutMs?: number
  /**
   * Time {@link ClusterNode.putBatch} then waits for the write concern (`writeConcern` nodes applied the batch)
   * before it fails with `PRICE_WRITE_CONCERN_TIMEOUT` (ms, default 5,000; 0: answer as soon as the log
   * acknowledged it, whatever the write concern).
   */
  readonly applyWaitMs?: number
  /**
   * How many nodes must have applied a write before {@link ClusterNode.putBatch} answers (default 1: this node).
   * 0: as soon as JetStream acknowledged it. 1: this node applied it too, so a read sent here sees it, and the
   * write is on this node's disk as well as in the stream. N ≥ 2: N nodes applied it (they say so on the
   * `price-store.<stream>.applied` subject), so it survives the stream losing it and N − 1 of those nodes losing
   * their disks. A write that does not reach it within `applyWaitMs` fails with `PRICE_WRITE_CONCERN_TIMEOUT`
   * (it is in the stream all the same). Per write: `putBatch(records, { writeConcern })`. See docs/cluster.md.
   */
  readonly writeConcern?: number
  /**
   * This node's id in the cluster, as the other nodes count it for the write concern and `/health` lists it: 1 to
   * 128 printable ASCII characters, the same across restarts of the node (default: the host name and a random
   * suffix, new at each start; `serve --nats` uses the host name and the database's path).
   */
  readonly nodeId?: string
  /**
   * Whether a store that holds commits may start an empty stream after its position (default false: refused with
   * `PRICE_REPLICA_DIVERGED`). Give it once, to the one node whose history the cluster takes: a single store turning
   * into the first node of a cluster, or the most advanced node after the stream was lost whole. Never by default,
   * so that a lagging node cannot define the cluster's history (and drop what the others hold) by starting first.
   */
  readonly adoptEmptyStream?: boolean
  /** The connection's name in NATS monitoring (default `price-store`). */
  readonly name?: string
  /**
   * Called with each error that interrupts following the stream and is retried (a lost connection, a leader
   * moving), for the operator's log; the node follows the stream again by itself.
   */
  readonly onError?: (err: unknown) => void
  /**
   * Called once when this node stops applying the stream on an error an operator must handle (the node's status says
   * `failed` from then on), for the operator's log.
   */
  readonly onFailure?: (err: PriceStoreError) => void
  /** Called with each commit this node refused to apply (see {@link RefusedCommit}), for the operator's log. */
  readonly onRefused?: (refused: RefusedCommit) => void
  /**
   * Called once this node, having found that the stream lost commits it holds, sent them to the stream again (see
   * docs/cluster.md, "When the stream loses acknowledged writes"), for the operator's log.
   */
  readonly onResent?: (resent: ResentCommits) => void
  /**
   * Called once when this node finds that its history forked from the stream's: the stream lost commits this node
   * holds and gave their positions to other writes. The node sent its lost commits to the stream again first (every
   * record it holds is in the stream), so nothing is lost, but this store can never apply the stream again: replace
   * it with a store rebuilt from the stream ({@link rebuildFromStream}; `serve --nats` does so by itself).
   */
  readonly onForked?: (forked: ResentCommits) => void
  /**
   * How long {@link ClusterNode.start} keeps trying to reach the stream when NATS does not answer yet (a NATS
   * cluster restarting), reporting each failure to `onError` (ms, default 0: fail at once with
   * `PRICE_LOG_UNAVAILABLE`; `Number.MAX_SAFE_INTEGER`: without end, as `serve --nats` does).
   */
  readonly startTimeoutMs?: number
}

/** The options of {@link ClusterNode.follow}: those of a node on a log already open. */
export type FollowOptions = Pick<ClusterOptions, 'applyWaitMs' | 'writeConcern' | 'nodeId' | 'adoptEmptyStream' | 'onError' | 'onFailure' | 'onRefused' | 'onResent' | 'onForked'>

/** Options of one write through a node. */
export interface WriteOptions {
  /** This write's write concern, instead of the node's `writeConcern` (0 to 16). */
  readonly writeConcern?: number
}

/** The largest write concern: more nodes than a cluster has would never be reached. */
export const MAX_WRITE_CONCERN = 16

/** {@link FollowOptions} with defaults applied and checked. */
export interface NodeSettings {
  readonly applyWaitMs: number
  readonly writeConcern: number
  readonly nodeId: string
  readonly adoptEmptyStream: boolean
  readonly onError: (err: unknown) => void
  readonly onFailure: (err: PriceStoreError) => void
  readonly onRefused: (refused: RefusedCommit) => void
  readonly onResent: (resent: ResentCommits) => void
  readonly onForked: (forked: ResentCommits) => void
}

/** Options with defaults applied and checked. */
export interface ResolvedClusterOptions extends JetStreamLogOptions, NodeSettings {
  readonly startTimeoutMs: number
}

/**
 * Checks the options of a node on an open log.
 * @throws PriceStoreError `PRICE_INVALID_OPTIONS` naming the option
 */
export function resolveNodeSettings(options: FollowOptions): NodeSettings {
  const nodeId = options.nodeId ?? nodeIdOf(`${hostname()}-${randomBytes(4).toString('hex')}`)
  if (!isNodeId(nodeId)) invalid('nodeId', 'a node id is 1 to 128 printable ASCII characters, without spaces')
  return {
    applyWaitMs: checkIntegerOption('applyWaitMs', options.applyWaitMs, 5_000, 0, MAX_TIMER_MS),
    writeConcern: checkIntegerOption('writeConcern', options.writeConcern, 1, 0, MAX_WRITE_CONCERN),
    nodeId,
    adoptEmptyStream: checkBooleanOption('adoptEmptyStream', options.adoptEmptyStream),
    onError: options.onError ?? (() => {}),
    onFailure: options.onFailure ?? (() => {}),
    onRefused: options.onRefused ?? (() => {}),
    onResent: options.onResent ?? (() => {}),
    onForked: options.onForked ?? (() => {}),
  }
}

const STREAM_NAME = /^[A-Za-z0-9_-]{1,64}$/

/**
 * Checks a node's options.
 * @throws PriceStoreError `PRICE_INVALID_OPTIONS` naming the option
 */
export function resolveClusterOptions(options: ClusterOptions): ResolvedClusterOptions {
  const servers = (typeof options.servers === 'string' ? options.servers.split(',') : [...(options.servers ?? [])]).map((url) => url.trim()).filter((url) => url !== '')
  const security = resolveNatsSecurity(servers, options.auth, options.tls)
  const stream = options.stream ?? 'PRICES'
  if (typeof stream !== 'string' || !STREAM_NAME.test(stream)) invalid('stream', 'a stream name is 1 to 64 letters, digits, - and _')
  return {
    ...security,
    stream,
    replicas: checkIntegerOption('replicas', options.replicas, servers.length >= 3 ? 3 : 1, 1, 5),
    maxAgeMs: checkIntegerOption('maxAgeMs', options.maxAgeMs, 0, 0, Number.MAX_SAFE_INTEGER),
    maxBytes: checkIntegerOption('maxBytes', options.maxBytes, 0, 0, Number.MAX_SAFE_INTEGER),
    duplicateWindowMs: checkIntegerOption('duplicateWindowMs', options.duplicateWindowMs, 120_000, 1_000, MAX_TIMER_MS),
    publishTimeoutMs: checkIntegerOption('publishTimeoutMs', options.publishTimeoutMs, 5_000, 1, MAX_TIMER_MS),
    name: options.name ?? 'price-store',
    ...resolveNodeSettings(options),
    startTimeoutMs: checkIntegerOption('startTimeoutMs', options.startTimeoutMs, 0, 0, Number.MAX_SAFE_INTEGER),
  }
}

function checkBooleanOption(option: string, value: unknown): boolean {
  if (value === undefined) return false
  if (typeof value !== 'boolean') invalid(option, 'true or false')
  return value
}

function invalid(option: string, message: string): never {
  throw new PriceStoreError('PRICE_INVALID_OPTIONS', `${option}: ${message}`, { details: { parameter: option } })
}
