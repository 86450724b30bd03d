/**
 * A node of a price-store cluster: a `PriceStore` that is a replica of a
 * NATS JetStream stream. Writes go to the stream (validated first, so
 * nothing invalid reaches it) and are applied, like every other node's
 * writes, by following the stream in order; each batch is committed at its
 * stream sequence, so the same position names the same commit on every node
 * (`store.position`, the `position` a write answers, live-stream event ids).
 * Reads go to the store as usual. See docs/cluster.md.
 */
import { PriceStoreError, isPriceStoreError } from '../errors.js'
import { validateBatch } from '../records/validate-batch.js'
import { checkIntegerOption } from '../rules/options.js'
import type { BatchCommit, PriceStore } from '../store/price-store.js'
import type { NewPriceRecord } from '../types.js'
import { appendBatch } from './append-batch.js'
import { AppliedPositions } from './applied-positions.js'
import { Applier } from './applier.js'
import { MAX_WRITE_CONCERN, resolveClusterOptions, resolveNodeSettings, type ClusterOptions, type FollowOptions, type NodeSettings, type ResolvedClusterOptions, type WriteOptions } from './cluster-options.js'
import { logCall, notAdopted, openLog, prepareToFollow, unavailable } from './follow-checks.js'
import { checkHistory, isRewrite } from './history-check.js'
import { resendLostCommits, type ResentCommits } from './lost-commits.js'
import { PositionWaiters } from './position-waiters.js'
import type { ReplicationLog } from './replication-log.js'
import { WriteFence } from './write-fence.js'
import type { ReplicationStatus } from './replication-status.js'

/** How often a node asks the stream for its newest commit, to know its lag while nothing is delivered (ms). */
const PROBE_EVERY_MS = 1_000
/**
 * A node behind the stream that applied nothing for this long follows the stream again (ms). The consumer a
 * node reads through lives on one NATS server; when that server dies, the client notices by missed heartbeats
 * (a few seconds), and this is the net under that.
 */
const STALLED_AFTER_MS = 10_000
/**
 * A node connected to NATS that has not heard from the stream for this long says `isolated` (ms): three probes
 * went unanswered, so its NATS server cannot reach the stream's leader (the minority side of a partition).
 */
const ISOLATED_AFTER_MS = 3 * PROBE_EVERY_MS
/** Longest wait between two tries to reach the stream when a node starts (ms). */
const START_RETRY_LONGEST_MS = 2_000

/** A store following a replication log, and writing through it. */
export class ClusterNode {
  readonly #store: PriceStore
  readonly #log: ReplicationLog
  readonly #applyWaitMs: number
  readonly #waiters = new PositionWaiters()
  readonly #applier: Applier
  #streamPosition: number | undefined
  #probe: NodeJS.Timeout | undefined
  /** The position at the last probe, and when it last moved (or the node last followed the stream again). */
  #progress = { position: 0, at: 0 }
  /** When the stream last answered a probe (ms since the epoch; 0 before the first). */
  #probedAt = 0
  /** When this node started following the stream: the clock `isolated` counts from before the stream first answers. */
  readonly #startedAt = Date.now()
  #stopped = false

  readonly #settings: NodeSettings
  /** What this node sent to the stream again after the stream lost commits it holds (lost-commits.ts). */
  #resent: ResentCommits | undefined
  /** Whether this node's history forked from the stream's (see `ClusterOptions.onForked`). */
  #forked = false
  readonly #nodeId: string
  readonly #writeConcern: number
  /** What every node (this one too) reported it applied: a write waits here for its write concern. */
  readonly #applied = new AppliedPositions()
  /** Holds writes back after a reconnect until the stream reaches what the nodes hold (write-fence.ts). */
  readonly #fence: WriteFence
  #stopListening: (() => void) | undefined

  private constructor(store: PriceStore, log: ReplicationLog, settings: NodeSettings) {
    this.#store = store
    this.#log = log
    this.#applyWaitMs = settings.applyWaitMs
    this.#settings = settings
    this.#nodeId = settings.nodeId
    this.#fence = new WriteFence(this.#applied, settings.nodeId)
    this.#writeConcern = settings.writeConcern
    this.#applier = new Applier(store, log, this.#waiters, {
      onError: settings.onError,
      onRefused: settings.onRefused,
      onFailure: (err) => {
        this.#applied.cancelAll()
        settings.onFailure(err)
        if (isRewrite(err) && log.readOnly !== true) void this.#resendLost()
      },
      onApplied: (position) => this.#report(position),
    })
  }

  /**
   * Connects to NATS, creates the stream when it does not exist, checks that the store can follow it, and
   * starts applying it from the store's position. The store must be open, and written only through this node
   * while it runs. A store with commits and a new, empty stream: the stream starts after the store's position.
   * @throws PriceStoreError `PRICE_INVALID_OPTIONS`, `PRICE_NOT_OPEN`, `PRICE_LOG_UNAVAILABLE` (no NATS server
   *   answered, or JetStream refused the stream), `PRICE_REPLICA_DIVERGED` (the stream no longer holds the commits
   *   after the store's position: re-seed it from a backup; or the store holds commits the stream does not)
   * @example
   * const store = await PriceStore.open('./data/prices', { provider })
   * const node = await ClusterNode.start(store, { servers: 'nats://127.0.0.1:4222' })
   * await node.putBatch(records) // { stored, position }, applied on this node
   */
  static async start(store: PriceStore, options: ClusterOptions): Promise<ClusterNode> {
    const resolved = resolveClusterOptions(options)
    if (store.status !== 'open') throw new PriceStoreError('PRICE_NOT_OPEN', 'open the store before starting a cluster node on it')
    const deadline = Date.now() + resolved.startTimeoutMs
    for (let wait = 250; ; wait = Math.min(wait * 2, START_RETRY_LONGEST_MS)) {
      try {
        return await ClusterNode.#startOnce(store, resolved)
      } catch (err) {
        // Only an unreachable stream is worth waiting for (a NATS cluster restarting answers within seconds); a refusal
        // naming what was refused (the credentials, the stream's settings) is the same at every try.
        const unreachable = isPriceStoreError(err, 'PRICE_LOG_UNAVAILABLE') && err.details.parameter === undefined
        if (!unreachable || Date.now() + wait > deadline || store.status !== 'open') throw err
        resolved.onError(err)
        await new Promise((resolve) => setTimeout(resolve, wait))
      }
    }
  }

  static async #startOnce(store: PriceStore, options: ResolvedClusterOptions): Promise<ClusterNode> {
    // A store with commits creates no stream unless it may start the cluster's history: nothing is left behind.
    const position = store.position
    const missingStream = position > 0 && !options.adoptEmptyStream ? notAdopted(position, options.stream, 'does not exist') : undefined
    const log = await openLog({ ...options, missingStream })
    try {
      return await ClusterNode.follow(store, log, options)
    } catch (err) {
      await log.close().catch(() => {})
      throw err
    }
  }

  /**
   * {@link ClusterNode.start} on a log already open (the in-memory log of tests, another transport).
   * @throws PriceStoreError as {@link ClusterNode.start}
   */
  static async follow(store: PriceStore, log: ReplicationLog, options: FollowOptions = {}): Promise<ClusterNode> {
    const settings = resolveNodeSettings(options)
    await prepareToFollow(store, log, settings)
    const node = new ClusterNode(store, log, settings)
    node.#stopListening = log.onAppliedReport?.((report) => node.#applied.record(report))
    node.#report(store.position)
    node.#applier.start()
    node.#probe = setInterval(() => void node.#probeStream(), PROBE_EVERY_MS)
    node.#probe.unref()
    await node.#probeStream()
    return node
  }

  /** The stream this node follows. */
  get stream(): string {
    return this.#log.name
  }

  /** The store this node applies into. */
  get store(): PriceStore {
    return this.#store
  }

  /**
   * Validates a batch exactly as `PriceStore.putBatch` does, appends it to the stream, and resolves once
   * JetStream acknowledged it, with the batch's commit position (its stream sequence) — then, unless
   * `applyWaitMs` is 0, once this node applied it too (or that time passed: the write is durable either way).
   * A batch over one message's size is sent as parts and a commit naming them: every node applies it whole or
   * not at all. A retried batch (the same records in the same order) within the stream's duplicate window is
   * recognised and answered with its first position; a later one writes the same records again, which replaces
   * them with themselves.
   * @throws PriceStoreError `PRICE_INVALID_RECORD`, `PRICE_INVALID_SIGNATURE` (the store rejects bad signatures;
   *   nothing reaches the stream), `PRICE_NOT_OPEN`,
   *   `PRICE_LOG_UNAVAILABLE` (not acknowledged in time: the batch may or may not be in the stream; retrying
   *   the same batch is safe)
   */
  async putBatch(records: Iterable<NewPriceRecord>, options: WriteOptions = {}): Promise<BatchCommit> {
    if (options.writeConcern !== undefined) checkIntegerOption('writeConcern', options.writeConcern, 1, 0, MAX_WRITE_CONCERN)
    if (this.#stopped || this.#store.status !== 'open') throw new PriceStoreError('PRICE_NOT_OPEN', 'the cluster node is stopped or its store is not open')
    // An array, so that a store that verifies signatures can read the batch a second time.
    const given = Symbol.iterator in Object(records) && !Array.isArray(records) ? [...records] : records
    const stored = validateBatch(given, this.#store.provider)
    if (stored.length === 0) return { stored: 0, position: this.#store.position }
    // Nothing the store would refuse on apply reaches the stream.
    await this.#store.checkSignatures(given)
    const failure = this.#applier.failure
    if (failure !== undefined) {
      throw new PriceStoreError('PRICE_REPLICA_FAILED', `this node stopped applying the stream ${this.#log.name} (${failure.code}: ${failure.message}); send writes to another node`, { cause: failure })
    }
    // Refused at once rather than buffered by the client until it reconnects (and then perhaps sent after a timeout).
    if (!this.#log.connected) throw unavailable(`this node has no connection to the stream ${this.#log.name} now; retry, here or on another node`, undefined)
    const fenced = await logCall(this.#log, () => this.#fence.check(this.#log.reconnects ?? 0, this.#store.position, () => this.#log.lastCommit()))
    if (fenced !== undefined) throw unavailable(`${fenced.reason}; retry, here or on another node`, undefined)
    let position: number
    try {
      position = await appendBatch(this.#log, stored, this.#store.provider, this.#store.signatureRule)
    } catch (err) {
      if (isPriceStoreError(err)) throw err
      throw unavailable(`the stream ${this.#log.name} did not acknowledge the batch`, err)
    }
    this.#streamPosition = Math.max(this.#streamPosition ?? 0, position)
    const needed = this.#applyWaitMs === 0 ? 0 : options.writeConcern ?? this.#writeConcern
    if (needed > 0) {
      // This node counts too: its own position is recorded with every commit it applies (#report).
      const count = await this.#applied.wait(position, needed, this.#applyWaitMs)
      if (count < needed) {
        throw new PriceStoreError('PRICE_WRITE_CONCERN_TIMEOUT',
          `the stream ${this.#log.name} acknowledged the batch at position ${position}, and ${count} of the ${needed} nodes the write concern asks for applied it within ${this.#applyWaitMs} ms. It is in the stream and nodes apply it as they reach it; send the same batch again to wait once more (it is applied once)`,
          { details: { position } })
      }
    }
    return { stored: stored.length, position }
  }

  /**
   * Sends to the stream again the commits this node holds that the stream lost, once this node stopped on finding
   * the loss; tries again (every few seconds) until the stream took them all or the node is stopped. When they
   * landed where this node has them (nothing else was written meanwhile), the stream names this node's commit at its
   * position again, and the node goes on applying: repaired. When other writes took those positions first, this
   * store forked from the stream for good: `onForked` says so, for whoever owns the store to replace it.
   */
  async #resendLost(): Promise<void> {
    for (let wait = 1_000; !this.#stopped; wait = Math.min(wait * 2, 10_000)) {
      try {
        const resent = await resendLostCommits(this.#store, this.#log)
        if (resent === undefined) return
        if (resent.commits > 0) {
          this.#resent = resent
          this.#settings.onResent(resent)
        }
        if (await this.#forkedFromLog()) {
          this.#forked = true
          if (!this.#stopped) this.#settings.onForked(resent)
        } else if (!this.#stopped) await this.#applier.resume()
        return
      } catch (err) {
        if (this.#stopped || this.#store.status !== 'open') return
        this.#settings.onError(err)
        await new Promise((resolve) => setTimeout(resolve, wait).unref())
      }
    }
  }

  /**
   * Whether the log holds another commit than the store's at the store's position (or ends before it).
   * @throws when the log cannot be read (the caller tries again)
   */
  async #forkedFromLog(): Promise<boolean> {
    try {
      await checkHistory(this.#store, this.#log)
      return false
    } catch (err) {
      if (isPriceStoreError(err, 'PRICE_REPLICA_DIVERGED')) return true
      throw err
    }
  }

  /** Records and tells the other nodes that this node applied up to `position`. */
  #report(position: number): void {
    const report = { node: this.#nodeId, position, ...(this.#applier.failure === undefined ? {} : { failed: true }) }
    this.#applied.record(report)
    this.#log.reportApplied?.(report)
  }

  /** Where this node stands: its state, the positions applied and known, the lag, the counters. Reads no I/O. */
  replication(): ReplicationStatus {
    const position = this.#store.position
    const passed = this.#applier.passed
    const failure = this.#applier.failure
    const { counters, lastRefused } = this.#applier
    const streamPosition = Math.max(this.#streamPosition ?? 0, counters.delivered, passed)
    const known = this.#streamPosition !== undefined || counters.delivered > 0
    const heardAt = Math.max(this.#probedAt, this.#applier.deliveredAt)
    const now = Date.now()
    const peers = this.#log.onAppliedReport === undefined ? undefined : this.#applied.peers(now).filter((peer) => peer.node !== this.#nodeId)
    return {
      node: this.#nodeId,
      ...(peers === undefined ? {} : { peers }),
      state: failure !== undefined ? 'failed' : this.#stopped || this.#applier.stopped ? 'stopped' : !this.#log.connected ? 'connecting'
        : now - (heardAt || this.#startedAt) >= ISOLATED_AFTER_MS ? 'isolated' : 'applying',
      stream: this.#log.name,
      position,
      ...(known ? { streamPosition, lag: streamPosition - passed } : {}),
      ...(heardAt === 0 ? {} : { heardAgoMs: Math.max(0, now - heardAt) }),
      appliedBatches: counters.batches,
      appliedRecords: counters.records,
      refusedCommits: counters.refused,
      ...(lastRefused === undefined ? {} : { lastRefused }),
      ...(this.#resent === undefined ? {} : { resent: this.#resent }),
      ...(this.#forked ? { forked: true } : {}),
      ...(this.#log.disagreements ? { leaderReads: this.#log.disagreements } : {}),
      ...(failure === undefined ? {} : { error: { code: failure.code, message: failure.message } }),
    }
  }

  /**
   * Resolves `true` once this node applied `position`, `false` after `timeoutMs` or when `signal` aborts (at
   * once when the node no longer applies anything).
   */
  waitForPosition(position: number, timeoutMs: number, signal?: AbortSignal): Promise<boolean> {
    const current = this.#store.position
    if (this.#applier.stopped) return Promise.resolve(current >= position)
    return this.#waiters.wait(position, current, timeoutMs, signal)
  }

  /** Stops applying and closes the connection to NATS; the store stays open (close it yourself). */
  async stop(): Promise<void> {
    if (this.#stopped) return
    this.#stopped = true
    clearInterval(this.#probe)
    this.#stopListening?.()
    await this.#applier.stop()
    this.#waiters.cancelAll()
    this.#applied.cancelAll()
    await this.#log.close()
  }

  /** A node behind the stream whose position has not moved for {@link STALLED_AFTER_MS} follows it again. */
  #checkProgress(now: number): void {
    const position = this.#store.position
    if (position !== this.#progress.position || this.#progress.at === 0) {
      this.#progress = { position, at: now }
      return
    }
    if ((this.#streamPosition ?? 0) > position && now - this.#progress.at >= STALLED_AFTER_MS) {
      this.#progress = { position, at: now }
      this.#applier.refollow()
    }
  }

  /**
   * Learns the stream's newest commit, so the lag shows while nothing is delivered (a node that fell behind), and
   * checks the stream still holds this node's newest commit: an idle node learns within a probe that the stream
   * lost it, rather than at the next commit.
   */
  async #probeStream(): Promise<void> {
    if (this.#stopped || !this.#log.connected) return
    // Once a second, so that a node that started or reconnected is counted by writers without waiting for a commit
    // (a node that stopped applying too: writers then know not to wait for it).
    this.#report(this.#store.position)
    if (this.#applier.stopped) return
    try {
      const last = await this.#log.lastCommit()
      this.#probedAt = Date.now()
      this.#streamPosition = Math.max(this.#streamPosition ?? 0, last)
      this.#checkProgress(this.#probedAt)
      await checkHistory(this.#store, this.#log)
    } catch (err) {
      if (isPriceStoreError(err, 'PRICE_REPLICA_DIVERGED')) this.#applier.fail(err)
      // Otherwise the connection is down or the leader is moving: the status says `connecting`, and the next probe retries.
    }
  }
}
