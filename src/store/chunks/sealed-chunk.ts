/**
 * A sealed chunk (all its parts) as read from its stored bytes: the one
 * parser of chunk parts, key columns and delta parts into row lists.
 */
import { MalformedBytes } from '../../keys/bytes.js'
import { COLUMN_FIELDS, MAX_KEY_RECORDS, parseChunkPart, readCompactId } from '../../keys/chunk-codec.js'
import type { ChunkColumn } from '../../keys/chunk-codec.js'
import { DELTA_PART, PERIOD_MS, describeChunk } from '../../keys/key-layout.js'
import { peekValue } from '../../keys/value-codec.js'
import { compareIds } from '../../rules/compare-ids.js'
import type { Provider } from '../../types.js'
import { Row } from '../rows/row.js'
import type { RowList } from '../rows/row-list.js'

const MIN_ROW_WEIGHT = 64

/**
 * A sealed chunk (all its parts) as read: each part's column parsed into
 * typed arrays, each row built on first use. Reading one record of an hour
 * (an as-of query, a range's edge) costs one row, not the hour's.
 *
 * A chunk with delta parts (records that reached the hour after it was
 * sealed) lists its records through a merged order: the base parts' records
 * with each delta part's merged over them in turn, a later part's record
 * replacing an earlier one with the same timestamp and id.
 */
export class SealedChunk implements RowList {
  readonly length: number
  /** How many records the base parts hold (delta parts' records replacing some of them or not). */
  readonly baseCount: number
  /** Stored bytes plus a small allowance per record: the chunk's weight in a cache. */
  readonly weight: number
  readonly #symbol: string
  readonly #provider: Provider
  readonly #parts: readonly Buffer[]
  readonly #columns: readonly ChunkColumn[]
  readonly #entries: readonly (() => string)[]
  /** Every record's timestamp, in order (the one part's own array when there is one and no delta). */
  readonly #timestamps: Float64Array
  /** With delta parts: each record's place (`part × PART_SPAN + index in the part`), in order. */
  readonly #order: Int32Array | undefined
  /** Rows built so far (made on the first `rowAt`: a chunk read for its column alone builds none). */
  #rows: (Row | undefined)[] | undefined
  readonly #baseParts: number
  /** Every record's value in order, made on the first {@link SealedChunk.columns} call. */
  #values: Float64Array | undefined

  /**
   * @param parts the base parts, in order, then the `deltas` delta parts, oldest first
   * @param firstPart the part number of `parts[0]` (the key column's, for a list of keys), for error messages
   * @throws MalformedBytes when a part does not parse or its records are out of order
   */
  constructor(symbol: string, period: number, parts: readonly Buffer[], provider: Provider, deltas = 0, firstPart = 0) {
    this.#symbol = symbol
    this.#provider = provider
    this.#parts = parts
    const baseParts = parts.length - deltas
    this.#baseParts = baseParts
    this.#entries = parts.map((_, part) => () => describeChunk(period, symbol, part < baseParts ? firstPart + part : DELTA_PART + part - baseParts))
    this.#columns = parts.map((bytes) => parseChunkPart(bytes, period * PERIOD_MS))
    for (const column of this.#columns) checkAscending(column.timestamps, column.count)
    this.baseCount = this.#columns.slice(0, baseParts).reduce((sum, column) => sum + column.count, 0)
    // The base parts' timestamps in order (the one part's own array when there is one).
    let timestamps = (this.#columns[0] as ChunkColumn).timestamps
    if (baseParts !== 1) {
      timestamps = new Float64Array(this.baseCount)
      let at = 0
      for (const column of this.#columns.slice(0, baseParts)) {
        timestamps.set(column.timestamps, at)
        at += column.count
      }
      checkAscending(timestamps, timestamps.length)
    }
    if (deltas === 0) {
      this.#order = undefined
    } else {
      // Each delta part merged over the base records in turn (a later part's record replacing an equal one).
      let order: Int32Array = new Int32Array(this.baseCount)
      for (let part = 0, at = 0; part < baseParts; part++) {
        for (let i = 0; i < (this.#columns[part] as ChunkColumn).count; i++) order[at++] = part * PART_SPAN + i
      }
      for (let part = baseParts; part < parts.length; part++) [order, timestamps] = this.#mergePart(order, timestamps, part)
      this.#order = order
    }
    this.#timestamps = timestamps
    this.length = this.#timestamps.length
    this.weight = parts.reduce((sum, part) => sum + part.length, 0) + this.length * MIN_ROW_WEIGHT
  }

  timestampAt(index: number): number {
    return this.#timestamps[index] as number
  }

  /**
   * The place of the record at `index` among the base parts' records
   * (counted across them), or -1 when a delta part holds it.
   */
  baseIndexAt(index: number): number {
    if (this.#order === undefined) return index
    const ref = this.#order[index] as number
    const part = partOf(ref)
    if (part >= this.#baseParts) return -1
    let before = 0
    for (let p = 0; p < part; p++) before += (this.#columns[p] as ChunkColumn).count
    return before + ref - part * PART_SPAN
  }

  /** The record's value from its value's fixed slot, without building its row; `undefined` when the header is damaged. */
  valueAt(index: number): number | undefined {
    const value = this.#valueOf(this.#refAt(index))
    return Number.isNaN(value) ? undefined : value
  }

  /**
   * Every record's timestamp and value, in order, for readers that take
   * them in bulk (the quality report): arrays the chunk keeps, not to be
   * changed. A value is NaN where its header is damaged (a stored value is
   * finite): read that record whole for the store's corruption error.
   */
  columns(): { readonly timestamps: Float64Array; readonly values: Float64Array } {
    if (this.#values === undefined) {
      const only = this.#order === undefined && this.#columns.length === 1 ? (this.#columns[0] as ChunkColumn).values : undefined
      if (only !== undefined) this.#values = only
      else {
        const values = new Float64Array(this.length)
        for (let index = 0; index < values.length; index++) values[index] = this.#valueOf(this.#refAt(index))
        this.#values = values
      }
    }
    return { timestamps: this.#timestamps, values: this.#values }
  }

  /** The record's id, without building its row. */
  idAt(index: number): string {
    return this.#idOf(this.#refAt(index))
  }

  rowAt(index: number): Row {
    this.#rows ??= new Array(this.length)
    let row = this.#rows[index]
    if (row === undefined) {
      const ref = this.#refAt(index)
      const part = partOf(ref)
      const local = ref - part * PART_SPAN
      const { fields } = this.#columns[part] as ChunkColumn
      const at = local * COLUMN_FIELDS
      row = new Row(this.#symbol, this.#timestamps[index] as number, this.#parts[part] as Buffer, fields[at] as number,
        fields[at + 1] as number, fields[at + 3] as number, fields[at + 4] as number, this.#entries[part] as () => string,
        this.#provider, fields[at + 2] === 1 ? readCompactId : undefined)
      this.#rows[index] = row
    }
    return row
  }

  /** The value of the record at `ref`, NaN when its header is damaged. */
  #valueOf(ref: number): number {
    const part = partOf(ref)
    const local = ref - part * PART_SPAN
    const column = this.#columns[part] as ChunkColumn
    if (column.values !== undefined) return column.values[local] as number
    const at = local * COLUMN_FIELDS
    return peekValue(this.#parts[part] as Buffer, column.fields[at + 3] as number, column.fields[at + 4] as number) ?? Number.NaN
  }

  /** The place of the record at `index`: `part × PART_SPAN + its index in the part`. */
  #refAt(index: number): number {
    if (this.#order !== undefined) return this.#order[index] as number
    let part = 0
    let local = index
    while (local >= (this.#columns[part] as ChunkColumn).count) local -= (this.#columns[part++] as ChunkColumn).count
    return part * PART_SPAN + local
  }

  #idOf(ref: number): string {
    const part = partOf(ref)
    const { fields } = this.#columns[part] as ChunkColumn
    const at = (ref - part * PART_SPAN) * COLUMN_FIELDS
    const bytes = this.#parts[part] as Buffer
    return fields[at + 2] === 1 ? readCompactId(bytes, fields[at] as number) : bytes.toString('utf8', fields[at] as number, fields[at + 1] as number)
  }

  /**
   * The records in `order` (ascending, with their `timestamps`) and those of
   * part `part` as one ascending order, with its timestamps; a record of the
   * part replaces one of `order` with the same timestamp and id. Typed arrays
   * throughout: a read of candles merges its hours' delta records this way.
   */
  #mergePart(order: Int32Array, timestamps: Float64Array, part: number): [Int32Array, Float64Array] {
    const column = this.#columns[part] as ChunkColumn
    const newer = column.timestamps
    const count = column.count
    const outOrder = new Int32Array(order.length + count)
    const outTimestamps = new Float64Array(order.length + count)
    let i = 0
    let j = 0
    let n = 0
    while (i < order.length && j < count) {
      const a = timestamps[i] as number
      const b = newer[j] as number
      const ref = part * PART_SPAN + j
      // Ids are compared only on a tie of timestamps.
      const compared = a - b || compareIds(this.#idOf(order[i] as number), this.#idOf(ref))
      if (compared < 0) {
        outOrder[n] = order[i] as number
        outTimestamps[n++] = a
        i++
      } else {
        outOrder[n] = ref
        outTimestamps[n++] = b
        j++
        if (compared === 0) i++
      }
    }
    outOrder.set(order.subarray(i), n)
    outTimestamps.set(timestamps.subarray(i), n)
    n += order.length - i
    for (; j < count; j++, n++) {
      outOrder[n] = part * PART_SPAN + j
      outTimestamps[n] = newer[j] as number
    }
    return [outOrder.subarray(0, n), outTimestamps.subarray(0, n)]
  }
}

/**
 * A record's place in a chunk: `part × PART_SPAN + index in the part` (a
 * part holds at most {@link MAX_KEY_RECORDS} records: a key column is one).
 */
const PART_SPAN = MAX_KEY_RECORDS

function partOf(ref: number): number {
  return Math.floor(ref / PART_SPAN)
}

/** @throws MalformedBytes when a timestamp is older than the one before */
function checkAscending(timestamps: ArrayLike<number>, count: number): void {
  for (let i = 1; i < count; i++) {
    if ((timestamps[i] as number) < (timestamps[i - 1] as number)) throw new MalformedBytes(`record ${i} is older than the one before`)
  }
}

