/**
 * Chunk parts: the sealed records of one symbol in one period, in
 * (timestamp, id) order, at most {@link MAX_PART_RECORDS} a part.
 *
 * `version (1 byte) | part count (u16 BE) | record count (varint) | column | bodies`
 *
 * The column holds, per record, the timestamp (a varint: the first as an
 * offset from the period's start, the others as the step from the previous
 * one), the id and the value's length; the bodies follow, in the same order.
 * Sampling picks records from the column without touching a body. An id
 * that is a lowercase canonical UUID is stored as its 16 bytes (tag 0);
 * any other id as tag `length + 1` and its UTF-8 bytes.
 *
 * A paged chunk's **key column** has the same layout with version
 * byte {@link KEY_COLUMN_VERSION}: its part count is the chunk's page count,
 * it holds every base record of the chunk (up to {@link MAX_KEY_RECORDS}),
 * and each record's value is its value's 9-byte header (flags and value),
 * so the value of any record is read without its body.
 */
import { ByteReader, ByteWriter, MalformedBytes } from './bytes.js'
import { KEY_COLUMN_VERSION, VALUE_VERSION, readFormatVersion } from './format-version.js'
import { VALUE_HEADER_BYTES, peekValue } from './value-codec.js'

/** Records per chunk part: a period of a fast feed is split so no value grows without bound. */
export const MAX_PART_RECORDS = 4096

/** Records a key column holds at most (an hour of one symbol at 291 records a second); a larger chunk has none and is read whole. */
export const MAX_KEY_RECORDS = 1 << 20

/** Bytes of stored values a page of a paged chunk holds about: an as-of reads one page, a dense range every page. */
export const PAGE_BYTES = 16 * 1024

/** Records a page holds at most, whatever their size. */
export const MAX_PAGE_RECORDS = 64

/** Pages a paged chunk has at most: their part numbers stay below the key column's. */
export const MAX_PAGES = 0x7000

/**
 * How many pages a paged chunk of `count` records of `bytes` value bytes in
 * all gets: about {@link PAGE_BYTES} each, at most {@link MAX_PAGE_RECORDS}
 * records each (unless that makes more than {@link MAX_PAGES}). Page `p`
 * holds records `p × span .. (p + 1) × span - 1` with
 * `span = ceil(count / pages)` ({@link pageSpan}): the page count alone
 * places every record, and no page is empty.
 */
export function pagesFor(count: number, bytes: number): number {
  const fits = Math.min(MAX_PAGE_RECORDS, Math.max(1, Math.floor((PAGE_BYTES * count) / Math.max(1, bytes))))
  return Math.max(1, Math.ceil(count / Math.max(fits, Math.ceil(count / MAX_PAGES))))
}

/** Records per page of a paged chunk of `count` records in `pages` pages (the last may hold fewer). */
export function pageSpan(count: number, pages: number): number {
  return Math.ceil(count / pages)
}

const UUID_TAG = 0

/** One record to seal: its timestamp, id bytes (UTF-8) and stored value. */
export interface ChunkRecord {
  readonly timestamp: number
  readonly idBytes: Uint8Array
  readonly value: Uint8Array
}

/**
 * Packs one chunk part of `records[from..to)`, sorted by (timestamp, id), none repeated; with `version`
 * {@link KEY_COLUMN_VERSION}, a paged chunk's key column: `partCount` is the page count, and each value is cut to
 * its {@link VALUE_HEADER_BYTES}-byte header (flags and value).
 */
export function encodeChunkPart(
  periodStart: number, partCount: number, records: readonly ChunkRecord[], version = VALUE_VERSION, from = 0, to = records.length,
): Buffer {
  const valueCut = version === KEY_COLUMN_VERSION ? VALUE_HEADER_BYTES : Infinity
  let bodyBytes = 0
  let idBytes = 0
  for (let i = from; i < to; i++) {
    const record = records[i] as ChunkRecord
    bodyBytes += Math.min(valueCut, record.value.length)
    idBytes += record.idBytes.length
  }
  // Sized from above (a timestamp step or length varint is at most 8 bytes) but close: `take` then keeps the memory.
  const writer = new ByteWriter(16 + bodyBytes + idBytes + (to - from) * 12)
  writer.byte(version).uint16(partCount).varint(to - from)
  let previous = periodStart
  for (let i = from; i < to; i++) {
    const record = records[i] as ChunkRecord
    writer.varint(record.timestamp - previous)
    previous = record.timestamp
    if (record.idBytes.length === 36 && uuidBytes(record.idBytes, UUID_SCRATCH)) writer.varint(UUID_TAG).bytes(UUID_SCRATCH)
    else writer.varint(record.idBytes.length + 1).bytes(record.idBytes)
    writer.varint(Math.min(valueCut, record.value.length))
  }
  for (let i = from; i < to; i++) {
    const { value } = records[i] as ChunkRecord
    writer.bytes(value.length > valueCut ? value.subarray(0, valueCut) : value)
  }
  return writer.take()
}

// One UUID's bytes at a time: copied into the part at once, so no buffer is allocated per record.
const UUID_SCRATCH = Buffer.alloc(16)

const PART_VERSIONS = [VALUE_VERSION, KEY_COLUMN_VERSION]

/** How many parts the chunk has, from any of its parts (a key column's: its page count). @throws MalformedBytes */
export function readPartCount(bytes: Buffer): number {
  const reader = new ByteReader(bytes)
  readFormatVersion(reader, PART_VERSIONS)
  return reader.uint16()
}

/** How many records one chunk part holds, from its header. @throws MalformedBytes */
export function readPartRecordCount(bytes: Buffer): number {
  const reader = new ByteReader(bytes)
  readFormatVersion(reader, PART_VERSIONS)
  reader.uint16()
  return reader.varint()
}

/** Checks that a chunk's key column is one (its version byte {@link KEY_COLUMN_VERSION}). @throws MalformedBytes */
export function checkKeyColumn(bytes: Buffer): void {
  readFormatVersion(new ByteReader(bytes), [KEY_COLUMN_VERSION])
}

/** A chunk part's column, parsed: per record its timestamp, and where its id and value sit in the part. */
export interface ChunkColumn {
  readonly count: number
  readonly timestamps: Float64Array
  /** Per record, {@link COLUMN_FIELDS} numbers: id start, id end, compact id (1 or 0), value start, value end. */
  readonly fields: Int32Array
  /** A key column's (version 5): each record's value, read from its header; NaN where the header is damaged (a stored value is finite). */
  readonly values?: Float64Array
}

/** Numbers per record in {@link ChunkColumn.fields}. */
export const COLUMN_FIELDS = 5

/**
 * Parses a chunk part's column into typed arrays, in one pass, without
 * touching a body. A record's id is a 16-byte UUID (read it with
 * {@link readCompactId}) when its compact flag is 1, else UTF-8.
 * @throws MalformedBytes when the part does not parse
 */
export function parseChunkPart(bytes: Buffer, periodStart: number): ChunkColumn {
  const reader = new ByteReader(bytes)
  const version = readFormatVersion(reader, PART_VERSIONS)
  reader.uint16()
  const count = reader.varint()
  if (count > (version === KEY_COLUMN_VERSION ? MAX_KEY_RECORDS : MAX_PART_RECORDS)) throw new MalformedBytes(`${count} records, more than a part holds`)
  const timestamps = new Float64Array(count)
  // Offsets within one stored value fit 32 bits (a length past the value's end is refused before it is kept).
  const fields = new Int32Array(count * COLUMN_FIELDS)
  let timestamp = periodStart
  for (let i = 0, at = 0; i < count; i++, at += COLUMN_FIELDS) {
    timestamp += reader.varint()
    const tag = reader.varint()
    const idLength = tag === UUID_TAG ? 16 : tag - 1
    const idStart = reader.skip(idLength)
    timestamps[i] = timestamp
    fields[at] = idStart
    fields[at + 1] = idStart + idLength
    fields[at + 2] = tag === UUID_TAG ? 1 : 0
    // The value's length for now; its start and end once the column's end is known.
    const valueLength = reader.varint()
    if (valueLength > bytes.length) throw new MalformedBytes(`record ${i} is longer than the part`)
    fields[at + 4] = valueLength
  }
  let valueStart = reader.offset
  for (let i = 0, at = 0; i < count; i++, at += COLUMN_FIELDS) {
    const valueEnd = valueStart + (fields[at + 4] as number)
    if (valueEnd > bytes.length) throw new MalformedBytes(`record ${i} ends after the part`)
    fields[at + 3] = valueStart
    fields[at + 4] = valueEnd
    valueStart = valueEnd
  }
  if (valueStart !== bytes.length) throw new MalformedBytes(`${bytes.length - valueStart} bytes after the last record`)
  if (version !== KEY_COLUMN_VERSION) return { count, timestamps, fields }
  // A key column's values are what its readers want in bulk (the quality report, counts): read them once here.
  const values = new Float64Array(count)
  for (let i = 0, at = 0; i < count; i++, at += COLUMN_FIELDS) values[i] = peekValue(bytes, fields[at + 3] as number, fields[at + 4] as number) ?? Number.NaN
  return { count, timestamps, fields, values }
}

/**
 * Visits each record of a chunk part, in order, with views into `bytes`.
 * `compactId` says the id at `idStart..idEnd` is a 16-byte UUID (read it
 * with {@link readCompactId}) rather than UTF-8.
 * @throws MalformedBytes when the part does not parse
 */
export function readChunkPart(
  bytes: Buffer,
  periodStart: number,
  visit: (timestamp: number, idStart: number, idEnd: number, compactId: boolean, valueStart: number, valueEnd: number) => void,
): void {
  const { count, timestamps, fields } = parseChunkPart(bytes, periodStart)
  for (let i = 0, at = 0; i < count; i++, at += COLUMN_FIELDS) {
    visit(timestamps[i] as number, fields[at] as number, fields[at + 1] as number, fields[at + 2] === 1, fields[at + 3] as number, fields[at + 4] as number)
  }
}

const HEX_PAIRS = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, '0'))

/** A 16-byte UUID as its lowercase canonical text (from a table of hex pairs: it runs for every record read). */
export function readCompactId(bytes: Buffer, start: number): string {
  let text = ''
  for (let i = 0; i < 16; i++) {
    if (i === 4 || i === 6 || i === 8 || i === 10) text += '-'
    text += HEX_PAIRS[bytes[start + i] as number]
  }
  return text
}

/**
 * Writes into `out` the 16 bytes of a lowercase canonical UUID given as UTF-8 and returns true; false for any other
 * id (read byte by byte: it runs for every sealed record).
 */
function uuidBytes(idBytes: Uint8Array, out: Buffer): boolean {
  let at = 0
  for (let i = 0; i < 36; i++) {
    if (i === 8 || i === 13 || i === 18 || i === 23) {
      if (idBytes[i] !== 0x2d) return false
      continue
    }
    const high = hexValue(idBytes[i] as number)
    const low = hexValue(idBytes[++i] as number)
    if (i === 8 || i === 13 || i === 18 || i === 23 || high < 0 || low < 0) return false
    out[at++] = high * 16 + low
  }
  return true
}

/** A lowercase hex digit's value, or -1. */
function hexValue(byte: number): number {
  if (byte >= 0x30 && byte <= 0x39) return byte - 0x30
  if (byte >= 0x61 && byte <= 0x66) return byte - 0x57
  return -1
}
