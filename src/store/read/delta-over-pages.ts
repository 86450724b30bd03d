/**
 * A paged chunk with delta parts, read by its page table for a newest-first
 * read of a few records (an as-of, latest-N): the base records from the one
 * page each search needs, the delta parts' records (a few, parsed whole)
 * merged beside them, a later part's record replacing an earlier one (or a
 * page's) with the same timestamp and id. Any other access (by position, or
 * oldest first) reads the chunk through its key column, once.
 */
import { compareTimeAndId } from '../../rules/compare-ids.js'
import type { PageTableChunk } from './page-table-chunk.js'
import type { Row } from './row.js'
import { firstAfter, firstAtOrAfter, type RowList } from './row-list.js'

export class DeltaOverPages implements RowList {
  readonly length: number
  readonly #base: PageTableChunk
  readonly #readDeltas: () => readonly RowList[]
  readonly #readFull: () => RowList
  #full: RowList | undefined

  /**
   * @param readDeltas the delta parts' records, oldest part first (read only for a newest-first read)
   * @param records the chunk's records, delta parts merged in (its heads entry's count)
   * @param readFull the chunk as read through its key column, for access by position
   */
  constructor(base: PageTableChunk, readDeltas: () => readonly RowList[], records: number, readFull: () => RowList) {
    this.#base = base
    this.#readDeltas = readDeltas
    this.length = records
    this.#readFull = readFull
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
    // The base records (by the page table), then each delta part's, oldest first.
    const lists: readonly RowList[] = [this.#base, ...this.#readDeltas()]
    const at = lists.map((list) => firstAfter(list, to) - 1)
    while (found.length < limit) {
      let newest: Row | undefined
      // The newest part first, so that of equal records its own is kept.
      for (let i = lists.length - 1; i >= 0; i--) {
        const index = at[i] as number
        if (index < 0) continue
        const row = (lists[i] as RowList).rowAt(index)
        if (newest === undefined || compareTimeAndId(row, newest) > 0) newest = row
      }
      if (newest === undefined || newest.timestamp < from) break
      found.push(newest)
      for (let i = 0; i < lists.length; i++) {
        const index = at[i] as number
        if (index >= 0 && compareTimeAndId((lists[i] as RowList).rowAt(index), newest) === 0) at[i] = index - 1
      }
    }
    return found
  }

  #whole(): RowList {
    this.#full ??= this.#readFull()
    return this.#full
  }
}
