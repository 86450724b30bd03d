/**
 * The store's upkeep, queued in its write queue between batches: sealing
 * turns after writes, prunes a turn at a time, and the `retention` option.
 */
import { PriceStoreError } from '../../errors.js'
import { throwIfAborted } from '../../rules/abort.js'
import type { StoreLife } from '../lifecycle/store-life.js'
import type { WriteQueue } from '../write/write-queue.js'
import { PruneRun, toPruneRequest } from './prune-request.js'
import type { PruneOptions, PruneResult } from './prune-request.js'
import type { Pruner } from './pruner.js'
import { Retention } from './retention.js'
import type { Sealer } from './sealer.js'

/** What upkeep needs from its store. */
export interface UpkeepContext {
  readonly life: StoreLife
  readonly queue: WriteQueue
  readonly sealer: Sealer
  readonly pruner: Pruner
}

/** Seals, prunes and applies retention for one store. */
export class Upkeep {
  readonly #context: UpkeepContext
  /** Prunes run one after another, each in turns of the write queue. */
  #pruning: Promise<unknown> = Promise.resolve()
  /** The `retention` option at work, while open. */
  #retention: Retention | undefined

  constructor(context: UpkeepContext) {
    this.#context = context
  }

  /** Queues a turn of sealing after the writes queued so far. */
  enqueueSeal(): void {
    const { queue, sealer, life } = this.#context
    queue.run(async () => {
      // The writer whose batch just committed goes on first: its next batch is checked, sent to be verified and
      // queued before a seal step holds the thread (a step can take tens of milliseconds; meanwhile under a
      // signature policy the workers would have nothing to verify).
      await new Promise((resolve) => setImmediate(resolve))
      // A failed step leaves its rows open (readers still see them); it runs again after the next batch.
      if (life.status === 'open' && (await sealer.runDue())) this.enqueueSeal()
    }).catch(() => {})
  }

  /**
   * Seals every open hour, due or not (when the store closes), in the write
   * queue like every seal step, after any seal turn queued before it; a
   * failure leaves its hours in the log, which the next open replays.
   */
  async sealAll(): Promise<void> {
    const { queue, sealer } = this.#context
    await queue.run(() => sealer.runAll()).catch(() => {})
  }

  /** `PriceStore.prune`: queued behind the prunes before it. */
  async prune(options: PruneOptions): Promise<PruneResult> {
    this.#context.life.assertOpen()
    const request = toPruneRequest(options)
    const pruned = this.#pruning.then(() => this.#runPrune(new PruneRun(request)))
    this.#pruning = pruned.catch(() => {})
    return pruned
  }

  /**
   * Starts the upkeep of a store just opened: the hours a crash left
   * unsealed are sealed in the background (as after a batch), and the
   * `retention` option (in days) starts from the newest hour it holds.
   */
  start(retentionDays: number | undefined, newestHour: number): void {
    // The queue first waits for the next turn of the event loop, so `open()` resolves (and a first query is
    // answered) before a crash's unsealed hours are sealed: a seal step can hold the thread for a few hundred
    // milliseconds, and started at once it ran before the open's caller went on.
    void this.#context.queue.run(() => new Promise((resolve) => setImmediate(resolve)))
    this.enqueueSeal()
    this.#retention = retentionDays === undefined ? undefined : new Retention(retentionDays)
    this.applyRetention(newestHour)
  }

  /** Starts the prune the `retention` option makes due now that the store holds a record in `newestHour`. */
  applyRetention(newestHour: number): void {
    const retention = this.#retention
    const before = retention?.due(newestHour)
    if (retention === undefined || before === undefined) return
    // In the background: a failure (or close) leaves the records for the next attempt.
    this.prune({ before }).catch(() => retention.failed())
  }

  /** A prune's turns, queued one after another behind the writes queued meanwhile. */
  async #runPrune(run: PruneRun): Promise<PruneResult> {
    const { life, queue, pruner } = this.#context
    const { signal } = run.request
    for (;;) {
      throwIfAborted(signal)
      if (life.status !== 'open') throw new PriceStoreError('PRICE_NOT_OPEN', `the store is ${life.status}: the prune stopped (what it removed stays removed)`)
      const done = await queue.run(() => pruner.turn(run))
      run.request.onProgress?.(run.result())
      if (done) return run.result()
    }
  }
}
