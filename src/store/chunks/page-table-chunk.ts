/**
 * A paged chunk read through its heads entry's page table
 * instead of its key column: the table gives each page's first timestamp,
 * so a search by timestamp reads the one page that can hold the answer,
 * and an as-of read costs one page beside the heads entry (cached) where
 * it cost the key column and a page. For small reads only: a chunk read
 * whole, or one with delta parts, goes through its key column
 * (paged-chunk.ts), whose values need no page.
 */
import { pageSpan } from '../../keys/chunk-codec.js'
import { idTag } from '../../rules/id-tag.js'
import { firstAtOrAbove } from '../../rules/sorted-search.js'
import { describeChunk } from '../../keys/key-layout.js'
import type { Provider } from '../../types.js'
import type { HeadRows } from '../heads/heads-entry.js'
import { corrupt, readPage, type PageLoader } from './paged-chunk.js'
import type { Row } from '../rows/row.js'
import { firstAfter, firstAtOrAfter, type RowList } from '../rows/row-list.js'
import { SealedChunk } from './sealed-chunk.js'

/** One view's reading of a paged chunk by its page table: each page read (and parsed) at most once. */
export class PageTableChunk implements RowList {
  readonly length: number
  readonly #symbol: string
  readonly #period: number
  readonly #provider: Provider
  readonly #starts: HeadRows['pageStarts']
  /** The chunk's last timestamp (its last head's, delta parts' records included): a search past it reads no page. */
  readonly #last: number
  readonly #span: number
  readonly #load: PageLoader
  readonly #pages: (SealedChunk | undefined)[]

  /** @param heads the chunk's heads entry: it has a page table (which its codec checked against its record counts); its delta parts are not read here (delta-over-pages.ts) */
  constructor(symbol: string, period: number, heads: HeadRows, load: PageLoader, provider: Provider) {
    this.#symbol = symbol
    this.#period = period
    this.#provider = provider
    this.#starts = heads.pageStarts
    this.#load = load
    this.length = heads.pageStarts.records
    this.#span = pageSpan(heads.pageStarts.records, heads.pageStarts.timestamps.length)
    this.#pages = new Array(heads.pageStarts.timestamps.length)
    this.#last = (heads[heads.length - 1] as Row).timestamp
  }

  timestampAt(index: number): number {
    const page = Math.floor(index / this.#span)
    return this.#page(page).timestampAt(index - page * this.#span)
  }

  rowAt(index: number): Row {
    const page = Math.floor(index / this.#span)
    return this.#page(page).rowAt(index - page * this.#span)
  }

  /** The chunk's last timestamp (its last head's, delta parts' records included): no base record is later. */
  get last(): number {
    return this.#last
  }

  /**
   * Appends the records in `from..to`, newest first, to `found` until it
   * holds `limit`: down from `to`, reading only the pages that hold them (and
   * the one holding the first record older than `from`). A search for
   * `from` would read a page of its own when it falls inside the hour (a
   * range's edge bucket); none is read when `from` is past the last record.
   */
  takeNewest(from: number, to: number, limit: number, found: Row[]): Row[] {
    if (from > this.#last) return found
    for (let i = firstAfter(this, to) - 1; i >= 0 && found.length < limit; i--) {
      const row = this.rowAt(i)
      if (row.timestamp < from) break
      found.push(row)
    }
    return found
  }

  /**
   * The index of the first record at or after `timestamp`: records before
   * the last page starting before it are all older, those from the next page
   * on are not, so only that page is read (none when no page starts before
   * it, or it is past the chunk's last record).
   */
  seek(timestamp: number): number {
    if (timestamp > this.#last) return this.length
    const page = firstAtOrAbove(this.#starts.timestamps, timestamp) - 1
    if (page < 0) return 0
    return page * this.#span + firstAtOrAfter(this.#page(page), timestamp)
  }

  /**
   * Page `page`, read and parsed on first use.
   * @throws PriceStoreError `PRICE_CORRUPT_VALUE` when it is missing, does not parse, or disagrees with the table
   */
  #page(page: number): SealedChunk {
    const held = this.#pages[page]
    if (held !== undefined) return held
    const expected = Math.min(this.#span, this.length - page * this.#span)
    // A page swapped, cut or rewritten is damage, never an answer: its count and first record must be the table's.
    const rows = readPage(this.#symbol, this.#period, this.#provider, this.#load, page, expected, "the heads entry's page table")
    const first = rows.timestampAt(0)
    const id = rows.idAt(0)
    if (first !== this.#starts.timestamps[page] || idTag(id) !== this.#starts.idTags[page]) {
      throw corrupt(describeChunk(this.#period, this.#symbol, page), `starts with ${id} at ${first}; the heads entry's page table places another record first`)
    }
    this.#pages[page] = rows
    return rows
  }
}

