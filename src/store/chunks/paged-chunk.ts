/**
 * Paged chunks: a sealed hour of one symbol read through its key column,
 * each record's body fetched with its page only when the record is asked
 * for. An as-of read costs the key column and one page (a few KB each),
 * not the hour's every body.
 */
import { PriceStoreError } from '../../errors.js'
import { pageSpan, readPartCount } from '../../keys/chunk-codec.js'
import { undecodable } from '../../keys/entry-errors.js'
import { KEYS_PART, describeChunk } from '../../keys/key-layout.js'
import type { Provider } from '../../types.js'
import type { Row } from '../rows/row.js'
import { type RowList } from '../rows/row-list.js'
import { SealedChunk } from './sealed-chunk.js'

/** Reads page `page` of the chunk (a `getSync` from the reading view's snapshot). */
export type PageLoader = (page: number) => Buffer

/**
 * What a view caches of a paged chunk: its key column and delta parts,
 * parsed and merged, which place every record in its page. It holds no
 * body: each view reads pages through a {@link PagedChunk}, from its own
 * snapshot.
 */
export class PagedIndex {
  /** The chunk's records in order: base records as key-column rows (their values are 9-byte headers), delta records whole. */
  readonly keys: SealedChunk
  readonly pages: number
  /** Base records per page (the last page may hold fewer). */
  readonly span: number
  readonly weight: number
  readonly #symbol: string
  readonly #period: number
  readonly #provider: Provider

  /**
   * @param keyColumn the chunk's key column (version byte 5)
   * @param deltas the chunk's delta parts, oldest first
   * @throws MalformedBytes when a part does not parse or its records are out of order
   * @throws PriceStoreError `PRICE_CORRUPT_VALUE` when the page count cannot place the records
   */
  constructor(symbol: string, period: number, keyColumn: Buffer, deltas: readonly Buffer[], provider: Provider) {
    this.#symbol = symbol
    this.#period = period
    this.#provider = provider
    this.keys = new SealedChunk(symbol, period, [keyColumn, ...deltas], provider, deltas.length, KEYS_PART)
    this.pages = readPartCount(keyColumn)
    const count = this.keys.baseCount
    this.span = this.pages === 0 ? 0 : pageSpan(count, this.pages)
    this.weight = this.keys.weight
    if (this.pages === 0 || count === 0 || (this.pages - 1) * this.span >= count) {
      throw corrupt(describeChunk(period, symbol, KEYS_PART), `says ${this.pages} pages for ${count} records`)
    }
  }

  /**
   * Page `page`, read with `load` and parsed, holding the records the key column places in it.
   * @throws PriceStoreError `PRICE_CORRUPT_VALUE` (see {@link readPage})
   */
  readPage(load: PageLoader, page: number): SealedChunk {
    const expected = Math.min(this.span, this.keys.baseCount - page * this.span)
    return readPage(this.#symbol, this.#period, this.#provider, load, page, expected, 'the key column')
  }

  /** The page's entry, for error messages. */
  describePage(page: number): string {
    return describeChunk(this.#period, this.#symbol, page)
  }
}

/**
 * One view's reading of a paged chunk: timestamps and values from the key
 * column, a record from its page, each page read (and parsed) at most once
 * per view. Delta records are whole in the index already.
 */
export class PagedChunk implements RowList {
  readonly length: number
  readonly #index: PagedIndex
  readonly #load: PageLoader
  readonly #pages: (SealedChunk | undefined)[]

  constructor(index: PagedIndex, load: PageLoader) {
    this.#index = index
    this.#load = load
    this.length = index.keys.length
    this.#pages = new Array(index.pages)
  }

  timestampAt(index: number): number {
    return this.#index.keys.timestampAt(index)
  }

  /** Every record's timestamp and value, from the key column and delta parts (see {@link SealedChunk.columns}). */
  columns(): { readonly timestamps: Float64Array; readonly values: Float64Array } {
    return this.#index.keys.columns()
  }

  /**
   * The record at `index`, from its page (read on first use).
   * @throws PriceStoreError `PRICE_CORRUPT_VALUE` when the page is missing or disagrees with the key column
   * @throws MalformedBytes when the page does not parse
   */
  rowAt(index: number): Row {
    const keys = this.#index.keys
    const base = keys.baseIndexAt(index)
    if (base < 0) return keys.rowAt(index)
    const { span } = this.#index
    const page = Math.floor(base / span)
    let rows = this.#pages[page]
    if (rows === undefined) {
      rows = this.#index.readPage(this.#load, page)
      this.#pages[page] = rows
    }
    const local = base - page * span
    const row = rows.rowAt(local)
    // The page must hold the very record the key column places there: a page swapped or rewritten is damage, never an answer.
    if (row.timestamp !== keys.timestampAt(index) || row.id !== keys.idAt(index) || !Object.is(rows.valueAt(local), keys.valueAt(index))) {
      throw corrupt(this.#index.describePage(page), `holds record ${local} as ${row.id} at ${row.timestamp} with value ${String(rows.valueAt(local))}; ` +
        `the key column has ${keys.idAt(index)} at ${keys.timestampAt(index)} with value ${String(keys.valueAt(index))}`)
    }
    return row
  }
}

/**
 * Page `page` of the paged chunk of `symbol` in `period`, read with `load`
 * and parsed, which must hold `expected` records, as `placedBy` (the key
 * column, or the heads entry's page table) places them.
 * @throws PriceStoreError `PRICE_CORRUPT_VALUE` naming the page when it is missing, does not parse or holds another count
 */
export function readPage(symbol: string, period: number, provider: Provider, load: PageLoader, page: number, expected: number, placedBy: string): SealedChunk {
  let rows: SealedChunk
  try {
    rows = new SealedChunk(symbol, period, [load(page)], provider, 0, page)
  } catch (err) {
    if (err instanceof PriceStoreError) throw err
    throw undecodable(describeChunk(period, symbol, page), err)
  }
  if (rows.length !== expected) throw corrupt(describeChunk(period, symbol, page), `holds ${rows.length} records; ${placedBy} places ${expected} in it`)
  return rows
}

/** `PRICE_CORRUPT_VALUE` naming a stored entry and what is wrong with it. */
export function corrupt(entry: string, what: string): PriceStoreError {
  return new PriceStoreError('PRICE_CORRUPT_VALUE', `${entry} ${what}`, { details: { key: entry } })
}
