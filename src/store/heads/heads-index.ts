/**
 * The heads index (sublevel `h`), written and read here only: for each
 * sealed hour of a symbol, the latest record of each ten-minute bucket (a
 * copy of its value) and the hour's record count. Sealing writes an entry
 * with each chunk and a prune deletes it with its chunk (both through
 * {@link HeadsIndex.put} and {@link HeadsIndex.delete}); ranges sampled at
 * ten minutes or a multiple read entries instead of chunks, scans read them
 * to learn which hours hold a chunk, and statistics count records from them.
 */
import { throwIfAborted } from '../../rules/abort.js'
import { asBuffer } from '../../keys/bytes.js'
import type { ChunkRecord } from '../../keys/chunk-codec.js'
import { undecodable } from '../../keys/entry-errors.js'
import { encodeHeads, readHeads, readHeadsCount, type ChunkSummary, type PageStarts } from '../../keys/heads-codec.js'
import { PERIOD_MS, describeHeads, headsKey, headsRange, readHeadsPeriod, readHeadsSymbol } from '../../keys/key-layout.js'
import type { Provider } from '../../types.js'
import type { RootBatch } from '../db/root-batch.js'
import { SublevelReads, type SnapshotOptions } from '../db/root-reads.js'
import type { BytesSublevel } from '../db/sublevels.js'
import { deltaKeysOf, headRows, headsEntryOf, type HeadRows } from './heads-entry.js'

/** Heads keys per round trip when iterating the index. */
const INDEX_BATCH = 256
/** The last period a key can name. */
const LAST_PERIOD = 0xffff_ffff

export type { SnapshotOptions } from '../db/root-reads.js'

/** Sealed record counts by symbol, then by hour. */
export type SealedCounts = Map<string, Map<number, number>>

/** The heads index of one store. */
export class HeadsIndex {
  readonly #level: BytesSublevel
  readonly #reads: SublevelReads
  readonly #prefix: Uint8Array
  readonly #provider: Provider

  constructor(level: BytesSublevel, prefix: Uint8Array, provider: Provider) {
    this.#level = level
    this.#reads = new SublevelReads(level)
    this.#prefix = prefix
    this.#provider = provider
  }

  /**
   * The heads of the chunk of `symbol` in `period` as rows, or `null` when
   * there is none: one synchronous read.
   * @throws PriceStoreError `PRICE_CORRUPT_VALUE` naming the entry when it does not decode
   */
  read(symbol: string, period: number, options: SnapshotOptions): HeadRows | null {
    const stored = this.#reads.getSync(headsKey(symbol, period), options)
    return stored === undefined ? null : headRows(symbol, period, stored, this.#provider)
  }

  /**
   * The record count of a sealed chunk, from its heads entry, as of now; 0
   * when there is none or it is damaged (a prune deletes a damaged entry
   * with its chunk all the same: the count is only reported).
   */
  recordCount(symbol: string, period: number): number {
    const bytes = this.#reads.getSync(headsKey(symbol, period), {})
    if (bytes === undefined) return 0
    try {
      return readHeads(bytes, period * PERIOD_MS, () => {}).records
    } catch {
      return 0
    }
  }

  /** The hours in `first..last` with a chunk of `symbol`, in order, iterated from the index. */
  async *periods(symbol: string, first: number, last: number, reverse: boolean, options: SnapshotOptions): AsyncGenerator<number> {
    const iterator = this.#level.keys({ ...headsRange(symbol, first, last), reverse, ...options })
    try {
      for (;;) {
        const keys = await iterator.nextv(INDEX_BATCH)
        if (keys.length === 0) return
        for (const key of keys) yield readHeadsPeriod(key)
      }
    } finally {
      await iterator.close()
    }
  }

  /** The first (or, `reverse`, the last) hour in `first..last` with a chunk of `symbol`, as of now. */
  async edgePeriod(symbol: string, first: number, last: number, reverse: boolean): Promise<number | undefined> {
    const [key] = await this.#level.keys({ ...headsRange(symbol, first, last), reverse, limit: 1 }).all()
    return key === undefined ? undefined : readHeadsPeriod(key)
  }

  /** The first (or, `reverse`, the last) hour with a chunk of `symbol`, as of now. */
  async edgeOfSymbol(symbol: string, reverse: boolean): Promise<number | undefined> {
    return this.edgePeriod(symbol, 0, LAST_PERIOD, reverse)
  }

  /**
   * One pass over the whole index in a view's snapshot: each sealed hour's
   * record count. `signal` is checked between round trips.
   * @throws PriceStoreError `PRICE_CORRUPT_VALUE` naming an entry that does not decode
   */
  async sealedCounts(options: SnapshotOptions, signal: AbortSignal | undefined): Promise<SealedCounts> {
    const counts: SealedCounts = new Map()
    const iterator = this.#level.iterator({ ...options })
    try {
      for (;;) {
        const entries = await iterator.nextv(1024)
        if (entries.length === 0) return counts
        throwIfAborted(signal)
        for (const [key, value] of entries) {
          const symbol = readHeadsSymbol(key)
          const period = readHeadsPeriod(key)
          let hours = counts.get(symbol)
          if (hours === undefined) counts.set(symbol, (hours = new Map()))
          try {
            hours.set(period, readHeadsCount(asBuffer(value)))
          } catch (err) {
            throw undecodable(describeHeads(symbol, period), err)
          }
        }
      }
    } finally {
      await iterator.close()
    }
  }

  /**
   * Puts the heads entry of the chunk of `symbol` in `period` holding
   * `records` (ascending, none repeated) in `pages` pages (0: not paged)
   * into `batch`; returns its heads as rows.
   */
  put(batch: RootBatch, symbol: string, period: number, records: readonly ChunkRecord[], pages: number): HeadRows {
    const entry = headsEntryOf(period, records, pages)
    batch.put(this.#prefix, headsKey(symbol, period), entry)
    return headRows(symbol, period, entry, this.#provider)
  }

  /**
   * Puts into `batch` the heads entry of a chunk that gains a delta part:
   * `summary` its new record and delta counts, `heads` (ascending, one per
   * ten-minute bucket) its new heads, `pages` the page table of its base
   * records (unchanged by delta parts), `deltaRecords` the records of its
   * delta parts (ascending, merged: one per timestamp and id), whose keys
   * the entry keeps while they are few enough (see heads-codec.ts).
   * Returns them as rows.
   */
  putSummary(
    batch: RootBatch, symbol: string, period: number, summary: ChunkSummary, heads: readonly ChunkRecord[], pages: PageStarts,
    deltaRecords: readonly ChunkRecord[],
  ): HeadRows {
    const entry = encodeHeads(period * PERIOD_MS, summary, heads, pages, deltaKeysOf(period, summary.deltas, deltaRecords))
    batch.put(this.#prefix, headsKey(symbol, period), entry)
    return headRows(symbol, period, entry, this.#provider)
  }

  /** Puts the deletion of the heads entry of `symbol` in `period` into `batch`. */
  delete(batch: RootBatch, symbol: string, period: number): void {
    batch.del(this.#prefix, headsKey(symbol, period))
  }
}
