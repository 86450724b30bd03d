/**
 * A paged chunk with delta parts, read by its page table for a newest-first
 * read of a few records (an as-of, latest-N, a range's edge): the base
 * records from the one page each search needs, the delta records merged
 * beside them, a later part's record replacing an earlier one (or a page's)
 * with the same timestamp and id. The delta records come from the heads
 * entry's delta keys, and a delta part is read only for a delta
 * record returned; without delta keys, from the delta parts, parsed whole.
 * Any other access (by position, or oldest first) reads the chunk through
 * its key column, once.
 */
import { describeChunk, DELTA_PART } from '../../keys/key-layout.js'
import { compareTimeAndId } from '../../rules/compare-ids.js'
import { corrupt } from './paged-chunk.js'
import type { PageTableChunk } from './page-table-chunk.js'
import type { Row } from '../rows/row.js'
import { firstAfter, firstAtOrAfter, type RowList } from '../rows/row-list.js'
import type { SealedChunk } from './sealed-chunk.js'

/** How a {@link DeltaOverPages} reads what lies beside its pages. */
export interface DeltaSources {
  readonly symbol: string
  readonly period: number
  /** The heads entry's name, for error messages. */
  readonly entry: string
  /** The chunk's delta parts. */
  readonly deltas: number
  /** The chunk's records, delta parts merged in (its heads entry's count). */
  readonly records: number
  /** The heads entry's delta keys, parsed; `undefined` when it has none. */
  readonly deltaKeys: SealedChunk | undefined
  /** Delta part `delta` (0 the oldest), parsed. */
  readDelta(delta: number): SealedChunk
  /** The chunk as read through its key column, for access by position. */
  readFull(): RowList
}

export class DeltaOverPages implements RowList {
  readonly length: number
  readonly #base: PageTableChunk
  readonly #sources: DeltaSources
  readonly #deltas: (SealedChunk | undefined)[]
  #full: RowList | undefined

  constructor(base: PageTableChunk, sources: DeltaSources) {
    this.#base = base
    this.#sources = sources
    this.length = sources.records
    this.#deltas = new Array(sources.deltas)
  }

  timestampAt(index: number): number {
    return this.#whole().timestampAt(index)
  }

  rowAt(index: number): Row {
    return this.#whole().rowAt(index)
  }

  seek(timestamp: number): number {
    return firstAtOrAfter(this.#whole(), timestamp)
  }

  /**
   * Appends the records in `from..to`, newest first, to `found` until it
   * holds `limit`: a merge of each list's newest records up to `to`, one
   * record per (timestamp, id), the newest part's.
   */
  takeNewest(from: number, to: number, limit: number, found: Row[]): Row[] {
    const { deltaKeys } = this.#sources
    // The base records (by the page table), then the delta keys, or each delta part's records, oldest first.
    const lists: readonly RowList[] = [this.#base, ...(deltaKeys === undefined ? this.#allDeltas() : [deltaKeys])]
    // No base record is at or after `from` when it is past the chunk's last: then no page is read.
    const at = lists.map((list, i) => (i === 0 && from > this.#base.last ? -1 : firstAfter(list, to) - 1))
    while (found.length < limit) {
      let newest: Row | undefined
      let source = -1
      // The newest part first, so that of equal records its own is kept.
      for (let i = lists.length - 1; i >= 0; i--) {
        const index = at[i] as number
        if (index < 0) continue
        const row = (lists[i] as RowList).rowAt(index)
        if (newest === undefined || compareTimeAndId(row, newest) > 0) (newest = row), (source = i)
      }
      if (newest === undefined || newest.timestamp < from) break
      found.push(deltaKeys !== undefined && source === 1 ? this.#deltaRecord(deltaKeys, at[1] as number) : newest)
      for (let i = 0; i < lists.length; i++) {
        const index = at[i] as number
        if (index >= 0 && compareTimeAndId((lists[i] as RowList).rowAt(index), newest) === 0) at[i] = index - 1
      }
    }
    return found
  }

  /**
   * The whole record of delta key `index`: from the newest delta part that
   * holds its timestamp and id, which must hold its value.
   * @throws PriceStoreError `PRICE_CORRUPT_VALUE` when no delta part holds it, or the one that does holds another value
   */
  #deltaRecord(keys: SealedChunk, index: number): Row {
    const timestamp = keys.timestampAt(index)
    const id = keys.idAt(index)
    const value = keys.valueAt(index)
    const { symbol, period, entry } = this.#sources
    for (let delta = this.#deltas.length - 1; delta >= 0; delta--) {
      const part = this.#delta(delta)
      for (let i = firstAtOrAfter(part, timestamp); i < part.length && part.timestampAt(i) === timestamp; i++) {
        if (part.idAt(i) !== id) continue
        if (!Object.is(part.valueAt(i), value)) {
          throw corrupt(describeChunk(period, symbol, DELTA_PART + delta), `holds ${id} at ${timestamp} with value ${String(part.valueAt(i))}; the heads entry's delta keys have ${String(value)}`)
        }
        return part.rowAt(i)
      }
    }
    throw corrupt(entry, `lists ${id} at ${timestamp} among its delta keys, and no delta part holds it`)
  }

  #delta(delta: number): SealedChunk {
    let part = this.#deltas[delta]
    if (part === undefined) this.#deltas[delta] = part = this.#sources.readDelta(delta)
    return part
  }

  #allDeltas(): SealedChunk[] {
    return Array.from({ length: this.#deltas.length }, (_, delta) => this.#delta(delta))
  }

  #whole(): RowList {
    this.#full ??= this.#sources.readFull()
    return this.#full
  }
}
