/**
 * The memory step after a batch's commit: one synchronous call that takes
 * the batch into everything readers and upkeep see (open area, hot tails and
 * symbol set, the commit position, the counters, the live watchers, the
 * sealing horizon, the retention check), so readers see all of the batch or
 * none of it. A write that failed ends here too.
 */
import type { PriceStoreError } from '../../errors.js'
import { periodOf } from '../../keys/key-layout.js'
import type { StoredRecord } from '../../records/stored-record.js'
import type { OpenWrite } from '../rows/open-area.js'
import type { StoreMemory } from '../chunks/store-memory.js'
import type { CommitJournal } from '../services/watch/commit-journal.js'
import { rowsInCommitOrder } from '../services/watch/commit-notice.js'
import type { WatchHub } from '../services/watch/watch-hub.js'
import type { Sealer } from '../upkeep/sealer.js'
import type { Upkeep } from '../upkeep/upkeep.js'
import { rowsBySymbol } from './open-write.js'

/** What the memory step updates. */
export interface CommitStepContext {
  readonly state: StoreMemory
  readonly journal: CommitJournal
  readonly hub: WatchHub
  readonly sealer: Sealer
  readonly upkeep: Upkeep
}

/** A batch that committed: its records, their open writes, the symbols it introduced, its position and newest timestamp. */
export interface CommittedBatch {
  readonly records: readonly StoredRecord[]
  readonly writes: readonly OpenWrite[]
  readonly newSymbols: ReadonlySet<string>
  readonly position: number
  readonly horizon: number
}

/** Takes committed batches into memory, and counts them. */
export class CommitStep {
  readonly #context: CommitStepContext
  #recordsWritten = 0
  #lastCommitAt: number | undefined

  constructor(context: CommitStepContext) {
    this.#context = context
  }

  /** Records committed since the store was opened. */
  get recordsWritten(): number {
    return this.#recordsWritten
  }

  /** When the last commit since opening landed (ms since the epoch). */
  get lastCommitAt(): number | undefined {
    return this.#lastCommitAt
  }

  /** Starts the counters again (when the store opens). */
  resetCounters(): void {
    this.#recordsWritten = 0
    this.#lastCommitAt = undefined
  }

  /** One synchronous step after the commit, so readers see all of the batch or none of it. */
  committed({ records, writes, newSymbols, position, horizon }: CommittedBatch): void {
    const { state, journal, hub, sealer, upkeep } = this.#context
    sealer.noteOpened(writes.filter((write) => state.open.period(write.period) === undefined).map((write) => write.period))
    state.applyBatch(writes, rowsBySymbol(writes), newSymbols)
    journal.committed(position)
    this.#recordsWritten += records.length
    this.#lastCommitAt = Date.now()
    hub.publish(position, () => rowsInCommitOrder(records, writes), journal.headId)
    sealer.advanceHorizon(horizon)
    upkeep.applyRetention(periodOf(horizon))
  }

  /** After a write whose outcome is unknown (LevelDB may have committed it). */
  failed(error: PriceStoreError): void {
    // The caches can no longer vouch for what they hold.
    this.#context.state.writeFailed()
    // Watchers cannot tell whether this commit landed: they end, and a resumed watch replays what did.
    this.#context.hub.end(error)
  }
}
