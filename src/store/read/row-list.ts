import { MalformedBytes } from '../../keys/bytes.js'
import { COLUMN_FIELDS, parseChunkPart, readCompactId } from '../../keys/chunk-codec.js'
import type { ChunkColumn } from '../../keys/chunk-codec.js'
import { PERIOD_MS, describeChunk } from '../../keys/key-layout.js'
import type { Provider } from '../../types.js'
import { Row } from './row.js'

/** Rows of one symbol in one period, ascending, read by position: a chunk builds its rows only when asked. */
export interface RowList {
  readonly length: number
  timestampAt(index: number): number
  rowAt(index: number): Row
}

/** A list over rows already built (open rows, or a chunk merged with them). */
export class RowArray implements RowList {
  static readonly EMPTY = new RowArray([])
  readonly #rows: readonly Row[]

  constructor(rows: readonly Row[]) {
    this.#rows = rows
  }

  get length(): number {
    return this.#rows.length
  }

  timestampAt(index: number): number {
    return (this.#rows[index] as Row).timestamp
  }

  rowAt(index: number): Row {
    return this.#rows[index] as Row
  }
}

const MIN_ROW_WEIGHT = 64

/**
 * A sealed chunk (all its parts) as read: each part's column parsed into
 * typed arrays, each row built on first use. Reading one record of an hour
 * (an as-of query, a range's edge) costs one row, not the hour's.
 */
export class SealedChunk implements RowList {
  readonly length: number
  /** Stored bytes plus a small allowance per record: the chunk's weight in a cache. */
  readonly weight: number
  readonly #symbol: string
  readonly #provider: Provider
  readonly #parts: readonly Buffer[]
  readonly #columns: readonly ChunkColumn[]
  readonly #entries: readonly (() => string)[]
  /** Every record's timestamp, all parts in order (the one part's own array when there is one). */
  readonly #timestamps: Float64Array
  readonly #rows: (Row | undefined)[]

  /**
   * @throws MalformedBytes when a part does not parse or its records are out of order
   */
  constructor(symbol: string, period: number, parts: readonly Buffer[], provider: Provider) {
    this.#symbol = symbol
    this.#provider = provider
    this.#parts = parts
    this.#entries = parts.map((_, part) => () => describeChunk(period, symbol, part))
    this.#columns = parts.map((bytes) => parseChunkPart(bytes, period * PERIOD_MS))
    const count = this.#columns.reduce((sum, column) => sum + column.count, 0)
    let timestamps = (this.#columns[0] as ChunkColumn).timestamps
    if (this.#columns.length > 1) {
      timestamps = new Float64Array(count)
      let at = 0
      for (const column of this.#columns) {
        timestamps.set(column.timestamps, at)
        at += column.count
      }
    }
    for (let i = 1; i < count; i++) {
      if ((timestamps[i] as number) < (timestamps[i - 1] as number)) throw new MalformedBytes(`record ${i} is older than the one before`)
    }
    this.length = count
    this.#timestamps = timestamps
    this.#rows = new Array(count)
    this.weight = parts.reduce((sum, part) => sum + part.length, 0) + count * MIN_ROW_WEIGHT
  }

  timestampAt(index: number): number {
    return this.#timestamps[index] as number
  }

  rowAt(index: number): Row {
    let row = this.#rows[index]
    if (row === undefined) {
      let part = 0
      let local = index
      while (local >= (this.#columns[part] as ChunkColumn).count) local -= (this.#columns[part++] as ChunkColumn).count
      const { fields } = this.#columns[part] as ChunkColumn
      const at = local * COLUMN_FIELDS
      row = new Row(this.#symbol, this.#timestamps[index] as number, this.#parts[part] as Buffer, fields[at] as number,
        fields[at + 1] as number, fields[at + 3] as number, fields[at + 4] as number, this.#entries[part] as () => string,
        this.#provider, fields[at + 2] === 1 ? readCompactId : undefined)
      this.#rows[index] = row
    }
    return row
  }
}

/** Every row of a list, built. */
export function allRows(list: RowList): Row[] {
  const rows = new Array<Row>(list.length)
  for (let i = 0; i < list.length; i++) rows[i] = list.rowAt(i)
  return rows
}

/** The index of the first row at or after `timestamp`. */
export function firstAtOrAfter(list: RowList, timestamp: number): number {
  let lo = 0
  let hi = list.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (list.timestampAt(mid) < timestamp) lo = mid + 1
    else hi = mid
  }
  return lo
}

/** The index of the first row after `timestamp`. */
export function firstAfter(list: RowList, timestamp: number): number {
  return firstAtOrAfter(list, timestamp + 1)
}
