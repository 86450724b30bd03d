/**
 * A fake cluster node for the HTTP adapter's tests (no NATS): its
 * replication status is whatever the test sets, its writes go to a store the
 * test gives (or fail as the test says), and `waitForPosition` resolves when
 * the test advances the position, or after its timeout.
 */
import type { BatchCommit, NewPriceRecord, PriceStore } from '../../../src/index.js'
import type { ClusterNode } from '../../../src/cluster.js'
import type { ReplicaSource, ReplicationStatus } from '../../../src/http.js'

/** A cluster node is what the adapter takes as `replica` (checked by the compiler, so the two cannot drift apart). */
export const clusterNodeFits = (node: ClusterNode): ReplicaSource => node

interface Waiter {
  readonly position: number
  readonly done: (reached: boolean) => void
}

export class FakeReplica implements ReplicaSource {
  state: ReplicationStatus['state'] = 'applying'
  stream = 'PRICES'
  node = 'node-a'
  /** The position this node has applied. */
  position = 0
  streamPosition: number | undefined = undefined
  appliedBatches = 0
  appliedRecords = 0
  refusedCommits = 0
  heardAgoMs: number | undefined = undefined
  lastRefused: ReplicationStatus['lastRefused'] = undefined
  peers: ReplicationStatus['peers'] = undefined
  error: { code: string; message: string } | undefined = undefined
  /** When set, `putBatch` rejects with it (after reading the records). */
  failWrites: unknown = undefined
  /** The batches `putBatch` took, as handed over. */
  readonly batches: NewPriceRecord[][] = []
  /** The write concern each `putBatch` was given (undefined: none named). */
  readonly writeConcerns: (number | undefined)[] = []
  /** The waits asked for, with their timeouts. */
  readonly waits: { position: number; timeoutMs: number }[] = []
  /** Waits ended by their signal (the client left). */
  abandoned = 0
  readonly #waiters = new Set<Waiter>()

  /** `store`: where writes are applied (validated by its `putBatch`, exactly as a cluster node validates). */
  constructor(private readonly store?: PriceStore) {}

  async putBatch(records: Iterable<NewPriceRecord>, options: { readonly writeConcern?: number } = {}): Promise<BatchCommit> {
    const batch = [...records]
    this.batches.push(batch)
    this.writeConcerns.push(options.writeConcern)
    if (this.failWrites !== undefined) throw this.failWrites
    if (this.store === undefined) throw new Error('this fake replica has no store to write to')
    const commit = await this.store.putBatch(batch)
    this.appliedBatches++
    this.appliedRecords += commit.stored
    this.advanceTo(commit.position)
    return commit
  }

  replication(): ReplicationStatus {
    return {
      node: this.node,
      state: this.state,
      stream: this.stream,
      position: this.position,
      ...(this.streamPosition === undefined ? {} : { streamPosition: this.streamPosition, lag: this.streamPosition - this.position }),
      appliedBatches: this.appliedBatches,
      ...(this.heardAgoMs === undefined ? {} : { heardAgoMs: this.heardAgoMs }),
      appliedRecords: this.appliedRecords,
      refusedCommits: this.refusedCommits,
      ...(this.lastRefused === undefined ? {} : { lastRefused: this.lastRefused }),
      ...(this.peers === undefined ? {} : { peers: this.peers }),
      ...(this.error === undefined ? {} : { error: this.error }),
    }
  }

  waitForPosition(position: number, timeoutMs: number, signal?: AbortSignal): Promise<boolean> {
    this.waits.push({ position, timeoutMs })
    if (this.position >= position) return Promise.resolve(true)
    return new Promise((resolve) => {
      const waiter: Waiter = {
        position,
        done: (reached) => {
          clearTimeout(timer)
          signal?.removeEventListener('abort', abandon)
          this.#waiters.delete(waiter)
          resolve(reached)
        },
      }
      const abandon = (): void => {
        this.abandoned++
        waiter.done(false)
      }
      const timer = setTimeout(() => waiter.done(false), timeoutMs)
      signal?.addEventListener('abort', abandon, { once: true })
      this.#waiters.add(waiter)
    })
  }

  /** Reads waiting for a position now. */
  get waiting(): number {
    return this.#waiters.size
  }

  /** Applies up to `position`: every wait for it or below resolves `true`. */
  advanceTo(position: number): void {
    this.position = Math.max(this.position, position)
    for (const waiter of [...this.#waiters]) if (waiter.position <= this.position) waiter.done(true)
  }
}
