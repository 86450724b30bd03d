/**
 * The write path: a batch of records checked, queued, written as one atomic
 * LevelDB write (its log entries, one per hour it touches, its journal entry
 * and the symbols it introduces), then taken into memory by the commit step.
 */
import type { AbstractLevel } from 'abstract-level'
import { logKey } from '../../keys/key-layout.js'
import { encodeJournalEntry } from '../../keys/journal-codec.js'
import { FramedRecords } from '../../keys/framed-records.js'
import type { FinishedLogEntry } from '../../keys/log-codec.js'
import type { StoredRecord } from '../../records/stored-record.js'
import { validateBatch } from '../../records/validate-batch.js'
import type { NewPriceRecord, Provider } from '../../types.js'
import { PriceStoreError, describeValue } from '../../errors.js'
import { RootBatch } from '../db/root-batch.js'
import { toStorageError } from '../db/storage-errors.js'
import type { StoreLife } from '../lifecycle/store-life.js'
import type { OpenWrite } from '../rows/open-area.js'
import type { CommitJournal } from '../services/watch/commit-journal.js'
import type { SymbolSet } from '../symbols/symbol-set.js'
import type { Sealer } from '../upkeep/sealer.js'
import type { Upkeep } from '../upkeep/upkeep.js'
import type { RecordVerdict } from '../../trust/verdict.js'
import type { IngestVerifier } from '../signatures/ingest-verifier.js'
import { resolveSignatureOptions, type SignatureOptions } from '../signatures/signature-options.js'
import type { VerdictIndex } from '../signatures/verdict-index.js'
import type { CommitStep } from './commit-step.js'
import { openWrite } from './open-write.js'
import type { WriteQueue } from './write-queue.js'

/** What `PriceStore.putBatch` wrote: the records of the batch, and the position of its commit. */
export interface BatchCommit {
  /** Records written (as `PriceStore.putMany` counts them). */
  readonly stored: number
  /** The batch's commit position (see `PriceStore.position`). */
  readonly position: number
}

/** Options of `PriceStore.putBatch`. */
export interface PutBatchOptions {
  /**
   * The position to commit the batch at, for a store that applies a replication log (price-store/cluster): the
   * log's sequence number, so that the same position names the same commit on every copy. It must be above the
   * store's `PriceStore.position`; it is written in the batch's own atomic write, so after a crash
   * `position` says exactly which batches are stored. Positions may skip numbers. Without it, the next number.
   */
  readonly position?: number
  /**
   * The replication log's id of this commit (1 to 256 characters), kept with its position in the same atomic
   * write, so a replica can later check that the log still names this commit at this position
   * (`PriceStore.positionId`).
   */
  readonly commitId?: string
  /**
   * Verify the batch under these signature options instead of the store's own (`threads` aside, which stays the
   * store's): a replication log applies each commit under the options its writer verified it with, so every copy keeps
   * the same verdicts and refuses the same batches, whatever its own options.
   */
  readonly signatures?: SignatureOptions
}

/** What the write path needs from its store. */
export interface BatchWriterContext {
  readonly db: AbstractLevel<any, any, any>
  readonly sync: boolean
  readonly provider: Provider
  readonly life: StoreLife
  readonly queue: WriteQueue
  /** The log's key prefix in the root database. */
  readonly logPrefix: Uint8Array
  readonly journal: CommitJournal
  readonly symbols: SymbolSet
  /** Read for the newest timestamp written so far. */
  readonly sealer: Sealer
  readonly upkeep: Upkeep
  readonly step: CommitStep
  /** Verifies a batch's signatures before it is queued (per the store's `signatures` option). */
  readonly ingest: IngestVerifier
  /** Where the verdicts go, in the batch's write. */
  readonly verdicts: VerdictIndex
}

/** Writes batches of records, one after another in the write queue. */
export class BatchWriter {
  readonly #context: BatchWriterContext

  constructor(context: BatchWriterContext) {
    this.#context = context
  }

  /**
   * `PriceStore.putBatch`: checks the records (and the commit position, when one is given), queues their write,
   * and a turn of sealing after it.
   */
  async putBatch(records: Iterable<NewPriceRecord>, { position: at, commitId, signatures }: PutBatchOptions = {}): Promise<BatchCommit> {
    const { life, provider, journal, queue, upkeep } = this.#context
    life.assertOpen()
    if (at !== undefined) checkCommitPosition(at, journal.head)
    if (commitId !== undefined) checkCommitId(commitId)
    const rule = signatures === undefined ? undefined : resolveSignatureOptions({ ...signatures, threads: undefined })
    const stored = validateBatch(records, provider)
    if (stored.length === 0) return { stored: 0, position: journal.head }
    // Verified from now on, off the event loop, while the batch keeps its place in the queue: batches are written in
    // the order they were given, and a writer with several in flight has one verified while another is written.
    // The workers read the records' values as the write will hold them, encoded once, chunk by chunk.
    const framed = new FramedRecords(stored)
    const verified = this.#context.ingest.check(stored, framed, true, rule)
    verified.catch(() => {}) // awaited in the queue; a rejection is the write's
    // Put together now, while the workers verify (every chunk is posted by now): the write in the queue is then a
    // short commit, and under a signature policy the main thread works while the workers do, not after them.
    const encoded: EncodedBatch = { records: stored, entries: framed.entries(), journalEntry: encodeJournalEntry(stored, commitId) }
    const write = queue.run(async () => {
      const verdicts = await verified
      // Checked again in the queue: a batch queued before this one may have taken the position meanwhile.
      if (at !== undefined) checkCommitPosition(at, journal.head)
      return this.#write(encoded, at, commitId, verdicts)
    })
    upkeep.enqueueSeal()
    return write
  }

  /** `PriceStore.checkSignatures`: under `reject`, the checks of {@link BatchWriter.putBatch}, writing nothing. */
  async checkSignatures(records: Iterable<NewPriceRecord>): Promise<void> {
    const { life, provider, ingest } = this.#context
    life.assertOpen()
    if (ingest.policy !== 'reject') return
    const stored = validateBatch(records, provider)
    await ingest.check(stored, new FramedRecords(stored), false)
  }

  // No open check here: close() waits for queued writes, which still run while it is 'closing'.
  async #write(
    { records, entries, journalEntry }: EncodedBatch, at: number | undefined, commitId: string | undefined, verdicts: readonly RecordVerdict[] | undefined,
  ): Promise<BatchCommit> {
    const { db, sync, provider, logPrefix, journal, symbols, sealer, step } = this.#context
    const newSymbols = new Set<string>()
    let horizon = sealer.horizon
    for (const record of records) {
      if (!symbols.has(record.symbol)) newSymbols.add(record.symbol)
      if (record.timestamp > horizon) horizon = record.timestamp
    }
    const batch = new RootBatch()
    // The journal entry goes in the records' own atomic write: after a crash it lists exactly the batches stored.
    const position = journal.stage(batch, journalEntry, at, commitId)
    const writes: OpenWrite[] = []
    for (const [period, { bytes, places }] of entries) {
      const key = logKey(period, position)
      batch.put(logPrefix, key, bytes)
      writes.push(openWrite(period, position, key, bytes, provider, places))
    }
    symbols.stageNew(batch, newSymbols)
    this.#context.verdicts.stage(batch, records, verdicts, position)
    try {
      await batch.write(db, sync)
    } catch (err) {
      const error = toStorageError(err, 'write the records')
      step.failed(error)
      throw error
    }
    step.committed({ records, writes, newSymbols, position, horizon })
    return { stored: records.length, position }
  }
}

/**
 * A batch's bytes, encoded before it takes its place in the queue (while its signatures are verified): what is left
 * to do in the queue needs the batch's position or its verdicts.
 */
interface EncodedBatch {
  readonly records: readonly StoredRecord[]
  /** The log entries, one per hour the records fall in. */
  readonly entries: ReadonlyMap<number, FinishedLogEntry>
  /** The journal entry, its `end` set when it is staged. */
  readonly journalEntry: Buffer
}

/**
 * A commit position given by a replication log must be a safe integer above the store's head: positions only
 * grow, and a position at or below the head names a commit the store already holds (or skipped).
 * @throws PriceStoreError `PRICE_INVALID_OPTIONS` (parameter `position`, with the store's `position`)
 */
function checkCommitPosition(at: number, head: number): void {
  if (Number.isSafeInteger(at) && at > head) return
  throw new PriceStoreError('PRICE_INVALID_OPTIONS', `a commit position must be an integer above the store's position ${head}; got ${describeValue(at)}`, {
    details: { parameter: 'position', position: head },
  })
}

/**
 * A commit id is a short string: it is kept in the commit's journal entry.
 * @throws PriceStoreError `PRICE_INVALID_OPTIONS` (parameter `commitId`)
 */
function checkCommitId(id: unknown): void {
  if (typeof id === 'string' && id.length >= 1 && id.length <= 256) return
  throw new PriceStoreError('PRICE_INVALID_OPTIONS', `a commit id must be a string of 1 to 256 characters; got ${describeValue(id)}`, {
    details: { parameter: 'commitId' },
  })
}
