import { MalformedBytes } from '../keys/bytes.js'
import { MAX_PART_RECORDS, readChunkPart, readCompactId, readPartRecords } from '../keys/chunk-codec.js'
import { PERIOD_MS, describeChunk } from '../keys/key-layout.js'
import type { Provider } from '../types.js'
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

/** Fields of the column kept per record, besides the timestamp. */
const FIELDS = 6
const MIN_ROW_WEIGHT = 64

/**
 * A sealed chunk (all its parts) as read: its column parsed into typed
 * arrays, each row built on first use. Reading one record of an hour (an
 * as-of query, a range's edge) costs one row, not the hour's.
 */
export class SealedChunk implements RowList {
  readonly length: number
  /** Stored bytes plus a small allowance per record: the chunk's weight in a cache. */
  readonly weight: number
  readonly #symbol: string
  readonly #provider: Provider
  readonly #parts: readonly Buffer[]
  readonly #entries: readonly (() => string)[]
  readonly #timestamps: Float64Array
  /** Per record: part, id start, id end, compact id (1/0), value start, value end. */
  readonly #fields: Float64Array
  readonly #rows: (Row | undefined)[]

  /**
   * @throws MalformedBytes when a part does not parse or its records are out of order
   */
  constructor(symbol: string, period: number, parts: readonly Buffer[], provider: Provider) {
    this.#symbol = symbol
    this.#provider = provider
    this.#parts = parts
    this.#entries = parts.map((_, part) => () => describeChunk(period, symbol, part))
    // Sized from the parts' headers: a chunk is parsed on every uncached read, so no slack and no growing.
    let capacity = 0
    for (const part of parts) capacity += Math.min(readPartRecords(part), MAX_PART_RECORDS)
    const timestamps = new Float64Array(capacity)
    const fields = new Float64Array(capacity * FIELDS)
    let count = 0
    parts.forEach((bytes, part) => {
      readChunkPart(bytes, period * PERIOD_MS, (timestamp, idStart, idEnd, compactId, valueStart, valueEnd) => {
        if (count > 0 && timestamp < (timestamps[count - 1] as number)) throw new MalformedBytes(`record ${count} is older than the one before`)
        if (count === capacity) throw new MalformedBytes('more records than the part headers say')
        timestamps[count] = timestamp
        const at = count * FIELDS
        fields[at] = part
        fields[at + 1] = idStart
        fields[at + 2] = idEnd
        fields[at + 3] = compactId ? 1 : 0
        fields[at + 4] = valueStart
        fields[at + 5] = valueEnd
        count++
      })
    })
    this.length = count
    this.#timestamps = timestamps
    this.#fields = fields
    this.#rows = new Array(count)
    this.weight = parts.reduce((sum, part) => sum + part.length, 0) + count * MIN_ROW_WEIGHT
  }

  timestampAt(index: number): number {
    return this.#timestamps[index] as number
  }

  rowAt(index: number): Row {
    let row = this.#rows[index]
    if (row === undefined) {
      const at = index * FIELDS
      const part = this.#fields[at] as number
      row = new Row(this.#symbol, this.#timestamps[index] as number, this.#parts[part] as Buffer, this.#fields[at + 1] as number,
        this.#fields[at + 2] as number, this.#fields[at + 4] as number, this.#fields[at + 5] as number, this.#entries[part] as () => string,
        this.#provider, this.#fields[at + 3] === 1 ? readCompactId : undefined)
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
