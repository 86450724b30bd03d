/**
 * A paged chunk's key column (see chunk-codec.ts) read for a
 * series: the timestamps and values of its records inside a window, in one
 * tight pass over the column and one over the 9-byte value headers, with
 * nothing built per record (no row, no `fields` array, no id). The quality
 * report reads a week of a hundred symbols this way; the ids it names are
 * read afterwards through the ordinary readers.
 *
 * It never throws: bytes it cannot read as a sound key column (another
 * version, a damaged header or value, records out of order, a page count
 * that cannot place the records) give `false`, and the caller reads the
 * hour the ordinary way, which answers or fails exactly as before.
 */
import { MAX_KEY_RECORDS, pageSpan } from './chunk-codec.js'
import { KEY_COLUMN_VERSION } from './format-version.js'
import { VALUE_HEADER_BYTES, peekValue } from './value-codec.js'

/** Where {@link readKeyColumnSeries} writes: columns with room from `length` on, grown by `reserve`. */
export interface SeriesSink {
  /** Records written so far: the next one goes here. */
  length: number
  timestamps: Float64Array
  /** `undefined` when values are not wanted. */
  values: Float64Array | undefined
  /** Makes room for `more` records after `length` (the arrays may be replaced). */
  reserve(more: number): void
}

/** The records of a key column that {@link readKeyColumnSeries} kept: `first..end-1`, their places in the column. */
export interface KeptRecords {
  first: number
  end: number
}

const UUID_TAG = 0

// One column's value lengths at a time (the values sit after the column): grown, never shrunk.
let valueLengths = new Int32Array(4096)

/**
 * Appends to `sink` the timestamp (and, when `sink.values` is given, the
 * value) of each record of the key column `bytes` with a timestamp in
 * `from..to`, and writes into `kept` which records those are. Returns false
 * (with `sink.length` unchanged) when the bytes are not a sound paged key
 * column or a value header is damaged: read the chunk the ordinary way then.
 *
 * Sound means what the ordinary readers (`parseChunkPart`, `SealedChunk`,
 * `PagedIndex`) accept: version {@link KEY_COLUMN_VERSION}, at most
 * {@link MAX_KEY_RECORDS} records, ascending timestamps, every id and value
 * inside the bytes and nothing after the last value, and a page count that
 * places every record.
 */
export function readKeyColumnSeries(bytes: Buffer, periodStart: number, from: number, to: number, sink: SeriesSink, kept: KeptRecords): boolean {
  const size = bytes.length
  if (size < 4 || bytes[0] !== KEY_COLUMN_VERSION) return false
  const pages = ((bytes[1] as number) << 8) | (bytes[2] as number)
  let at = 3
  const count = readVarint(bytes, at, size)
  if (count < 0) return false
  at = varintEnd
  if (count > MAX_KEY_RECORDS || count === 0 || pages === 0 || (pages - 1) * pageSpan(count, pages) >= count) return false
  if (valueLengths.length < count) valueLengths = new Int32Array(Math.max(count, valueLengths.length * 2))
  const lengths = valueLengths
  sink.reserve(count)
  const timestamps = sink.timestamps
  const start = sink.length
  let out = start
  let first = -1
  let end = -1
  let timestamp = periodStart
  for (let record = 0; record < count; record++) {
    // Each varint is one byte but for a long step or id: those take the general reader (as does a byte past the end, undefined).
    let step = bytes[at] as number
    const next = bytes[at + 1] as number
    // A step of seconds takes two bytes: read those in place too.
    if (step < 0x80) at++
    else if (next < 0x80) {
      step = (step & 0x7f) + next * 0x80
      at += 2
    } else if ((step = readVarint(bytes, at, size)) < 0) return false
    else at = varintEnd
    let tag = bytes[at] as number
    if (tag < 0x80) at++
    else if ((tag = readVarint(bytes, at, size)) < 0) return false
    else at = varintEnd
    at += tag === UUID_TAG ? 16 : tag - 1
    let length = bytes[at] as number
    if (length < 0x80) at++
    else if ((length = readVarint(bytes, at, size)) < 0) return false
    else at = varintEnd
    if (length > size) return false
    lengths[record] = length
    // A step is never negative: records are ascending, as the ordinary readers insist.
    timestamp += step
    if (timestamp >= from && timestamp <= to) {
      if (first < 0) first = record
      end = record + 1
      timestamps[out++] = timestamp
    }
  }
  const values = sink.values
  let valueStart = at
  if (values !== undefined && first >= 0) {
    for (let record = 0; record < first; record++) valueStart += lengths[record] as number
    const view = new DataView(bytes.buffer, bytes.byteOffset, size)
    // Flags that peekValue took (every header of a column has the same, as a rule): read the next ones alike, in place.
    let sound = -1
    for (let record = first; record < end; record++) {
      const length = lengths[record] as number
      const valueEnd = valueStart + length
      if (valueEnd > size) return false
      let value: number | undefined
      if (bytes[valueStart] === sound && length >= VALUE_HEADER_BYTES) value = view.getFloat64(valueStart + 1, true)
      else if ((value = peekValue(bytes, valueStart, valueEnd)) !== undefined) sound = bytes[valueStart] as number
      // A damaged header (or a NaN, which no record stores): the ordinary reader names the damage.
      if (value === undefined || Number.isNaN(value)) return false
      values[start + record - first] = value
      valueStart = valueEnd
    }
    for (let record = end; record < count; record++) valueStart += lengths[record] as number
  } else {
    for (let record = 0; record < count; record++) valueStart += lengths[record] as number
  }
  // Every id and value inside the bytes, nothing after the last value.
  if (at > size || valueStart !== size) return false
  sink.length = out
  kept.first = first < 0 ? 0 : first
  kept.end = first < 0 ? 0 : end
  return true
}

/** Where the varint last read by {@link readVarint} ended. */
let varintEnd = 0

/** The varint at `at` (as ByteReader.varint: at most 8 bytes, 7 bits each, low first), its end in {@link varintEnd}; -1 when it does not read. */
function readVarint(bytes: Buffer, at: number, size: number): number {
  let value = 0
  let scale = 1
  for (let i = 0; i < 8; i++, scale *= 0x80) {
    if (at >= size) return -1
    const byte = bytes[at++] as number
    value += (byte & 0x7f) * scale
    if (byte < 0x80) {
      varintEnd = at
      return value
    }
  }
  return -1
}
