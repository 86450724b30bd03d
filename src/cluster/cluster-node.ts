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
import type { BatchCommit, PriceStore } from '../store/price-store.js'
import type { NewPriceRecord } from '../types.js'
import { Applier, trimmedPast } from './applier.js'
import { encodeBatch, encodePartsCommit } from './batch-codec.js'
import { checkHistory } from './history-check.js'
import { resolveClusterOptions, type ClusterOptions, type ResolvedClusterOptions } from './cluster-options.js'
import { JetStreamLog } from './jetstream-log.js'
import { redactNatsUrl } from './nats-connection.js'
import { PositionWaiters } from './position-waiters.js'
import type { ReplicationLog } from './replication-log.js'
import type { ReplicationStatus } from './replication-status.js'

/** How often a node asks the stream for its newest commit, to know its lag while nothing is delivered (ms). */
const PROBE_EVERY_MS = 1_000
/**
 * A node behind the stream that applied nothing for this long follows the stream again (ms). The consumer a
 * node reads through lives on one NATS server; when that server dies, the client notices by missed heartbeats
 * (a few seconds), and this is the net under that.
 */
const STALLED_AFTER_MS = 10_000

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
  #stopped = false

  private constructor(store: PriceStore, log: ReplicationLog, applyWaitMs: number, onError: (err: unknown) => void) {
    this.#store = store
    this.#log = log
    this.#applyWaitMs = applyWaitMs
    this.#applier = new Applier(store, log, this.#waiters, onError)
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
    const log = await openLog(resolved)
    try {
      return await ClusterNode.follow(store, log, resolved)
    } catch (err) {
      await log.close().catch(() => {})
      throw err
    }
  }

  /**
   * {@link ClusterNode.start} on a log already open (the in-memory log of tests, another transport).
   * @throws PriceStoreError as {@link ClusterNode.start}
   */
  static async follow(store: PriceStore, log: ReplicationLog, options: Pick<ClusterOptions, 'applyWaitMs' | 'onError'> = {}): Promise<ClusterNode> {
    await checkCanFollow(store, log)
    const node = new ClusterNode(store, log, options.applyWaitMs ?? 5_000, options.onError ?? (() => {}))
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
  async putBatch(records: Iterable<NewPriceRecord>): Promise<BatchCommit> {
    if (this.#stopped || this.#store.status !== 'open') throw new PriceStoreError('PRICE_NOT_OPEN', 'the cluster node is stopped or its store is not open')
    // An array, so that a store that verifies signatures can read the batch a second time.
    const given = Symbol.iterator in Object(records) && !Array.isArray(records) ? [...records] : records
    const stored = validateBatch(given, this.#store.provider)
    if (stored.length === 0) return { stored: 0, position: this.#store.position }
    // Nothing the store would refuse on apply reaches the stream.
    await this.#store.checkSignatures(given)
    const failure = this.#applier.failure
    if (failure !== undefined) throw unavailable(`this node stopped applying the stream (${failure.code}); writes go to another node`, failure)
    // Refused at once rather than buffered by the client until it reconnects (and then perhaps sent after a timeout).
    if (!this.#log.connected) throw unavailable(`this node has no connection to the stream ${this.#log.name} now; retry, here or on another node`, undefined)
    const batch = encodeBatch(stored, this.#store.provider, this.#log.maxMessageBytes)
    let position: number
    try {
      if (batch.inline !== undefined) {
        position = (await this.#log.appendCommit(batch.inline, batch.id, this.#store.provider.id)).position
      } else {
        // Parts in flight together (their order in the stream does not matter: the commit lists their positions).
        const parts = await Promise.all(batch.parts.map(async (part, index) => (await this.#log.appendPart(part, `${batch.id}.${index}`)).position))
        position = (await this.#log.appendCommit(encodePartsCommit(parts), batch.id, this.#store.provider.id)).position
      }
    } catch (err) {
      throw unavailable(`the stream ${this.#log.name} did not acknowledge the batch`, err)
    }
    this.#streamPosition = Math.max(this.#streamPosition ?? 0, position)
    if (this.#applyWaitMs > 0) await this.waitForPosition(position, this.#applyWaitMs)
    return { stored: stored.length, position }
  }

  /** Where this node stands: its state, the positions applied and known, the lag, the counters. Reads no I/O. */
  replication(): ReplicationStatus {
    const position = this.#store.position
    const failure = this.#applier.failure
    const streamPosition = Math.max(this.#streamPosition ?? 0, this.#applier.counters.delivered, position)
    const known = this.#streamPosition !== undefined || this.#applier.counters.delivered > 0
    const state = failure !== undefined ? 'failed' : this.#stopped || this.#applier.stopped ? 'stopped' : this.#log.connected ? 'applying' : 'connecting'
    return {
      state,
      stream: this.#log.name,
      position,
      ...(known ? { streamPosition, lag: streamPosition - position } : {}),
      appliedBatches: this.#applier.counters.batches,
      appliedRecords: this.#applier.counters.records,
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
    await this.#applier.stop()
    this.#waiters.cancelAll()
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
    if (!this.#log.connected || this.#applier.stopped) return
    try {
      const last = await this.#log.lastCommit()
      this.#streamPosition = Math.max(this.#streamPosition ?? 0, last)
      this.#checkProgress(Date.now())
      await checkHistory(this.#store, this.#log)
    } catch (err) {
      if (isPriceStoreError(err, 'PRICE_REPLICA_DIVERGED')) this.#applier.fail(err)
      // Otherwise the connection is down or the leader is moving: the status says `connecting`, and the next probe retries.
    }
  }
}

/**
 * Whether the store can follow the log from its position: the log must still hold every message after it, and
 * must not be behind it. A new, empty log with a store that has commits starts after the store's position.
 */
async function checkCanFollow(store: PriceStore, log: ReplicationLog): Promise<void> {
  const position = store.position
  let bounds = await logCall(log, () => log.bounds())
  if (bounds.last === 0 && position > 0) {
    await logCall(log, () => log.startAt(position + 1))
    bounds = await logCall(log, () => log.bounds())
  }
  if (position > bounds.last) {
    throw new PriceStoreError('PRICE_REPLICA_DIVERGED',
      `this store is at position ${position} and the stream ${log.name} ends at ${bounds.last}: the store holds commits the stream does not (another stream, or writes made without it). Start it on its own stream, or re-seed it from a backup of a node of this cluster`,
      { details: { position } })
  }
  if (position + 1 < bounds.first) throw trimmedPast(log.name, position, bounds.first)
  await logCall(log, () => checkHistory(store, log))
}

async function openLog(options: ResolvedClusterOptions): Promise<ReplicationLog> {
  try {
    return await JetStreamLog.open(options)
  } catch (err) {
    // Refusals say what and why already (credentials, permissions, the stream's settings), without a secret.
    if (isPriceStoreError(err)) throw err
    // The resolved URLs carry no credentials (moved to `auth`); redacted all the same, as any URL a node prints.
    const servers = options.servers.map(redactNatsUrl).join(', ')
    throw unavailable(`cannot open the stream ${options.stream} on ${servers}: ${err instanceof Error ? err.message : String(err)}`, err)
  }
}

async function logCall<T>(log: ReplicationLog, call: () => Promise<T>): Promise<T> {
  try {
    return await call()
  } catch (err) {
    if (isPriceStoreError(err)) throw err
    throw unavailable(`the stream ${log.name} did not answer`, err)
  }
}

function unavailable(message: string, cause: unknown): PriceStoreError {
  return new PriceStoreError('PRICE_LOG_UNAVAILABLE', message, { cause })
}
