/**
 * Heads entries: for the chunk of one symbol in one period, the latest
 * record of each non-empty ten-minute bucket, with a copy of its value, the
 * chunk's record count and how many delta parts it has. Ranges sampled at
 * ten minutes or a multiple read these instead of the chunk.
 *
 * `version (1 byte) | record count (varint) | delta count (varint) | head count (1 byte) |
 *  (timestamp offset from the period's start (varint) | id | value)* |
 *  page count (varint) | [base record count (varint) | (first timestamp's offset from the period's start (varint) | first id's tag (varint))*] |
 *  delta keys (varint length | bytes)`,
 * id and value each a varint length and their bytes. The page table gives
 * how many base records the pages hold and the first timestamp and a
 * 32-bit tag of the first id (rules/id-tag.ts) of each page, so a page read alone
 * is known to be the page the table places there (none for a chunk read
 * whole, or of more than {@link MAX_TABLE_PAGES} pages), and an as-of read
 * goes from the heads entry straight to one page (and the chunk's delta
 * parts, whose records are merged over the pages').
 *
 * The **delta keys** (length 0: none) are, for a chunk with delta
 * parts, their records' timestamps, ids and value headers as one key column
 * (chunk-codec.ts) whose part count is the delta count: the parts merged, a
 * later part's record replacing an earlier one's with the same timestamp
 * and id. A read of a few records or of refs alone merges them over the
 * pages or the key column, and reads a delta part only for a delta record it
 * returns whole. A chunk with more than {@link MAX_DELTA_KEYS} delta records
 * has none (its readers read the delta parts).
 */
import { ByteReader, ByteWriter, MalformedBytes } from './bytes.js'
import { HEADS_PER_PERIOD, MAX_DELTA_PARTS, PERIOD_MS } from './key-layout.js'
import { HEADS_VERSION, KEY_COLUMN_VERSION, readFormatVersion } from './format-version.js'
import { readPartCount, readPartRecordCount, type ChunkRecord } from './chunk-codec.js'

const READABLE = [HEADS_VERSION]

/**
 * Delta records a heads entry keeps the keys of at most (about 15 KB with
 * UUID ids): a chunk with more has none in its entry, which stays small in
 * the heads cache, and its readers read its delta parts.
 */
export const MAX_DELTA_KEYS = 512

/**
 * Pages a page table lists at most (about 16,000 records of an hour): a
 * larger chunk's heads entry lists none, so the entry stays small in the
 * heads cache, and its as-of reads go through its key column.
 */
export const MAX_TABLE_PAGES = 256

/** What a heads entry says of its chunk besides the heads. */
export interface ChunkSummary {
  /** Records in the chunk, delta parts merged in. */
  readonly records: number
  /** Delta parts (keys `DELTA_PART + 0 ..`), beside the base parts. */
  readonly deltas: number
}

/** A page table: each page's first record, by its timestamp and its id's tag (rules/id-tag.ts), and how many records the pages hold. */
export interface PageStarts {
  /** Ascending. */
  readonly timestamps: Float64Array
  readonly idTags: Uint32Array
  /** Records in the pages (the chunk's base records; delta parts hold the others). */
  readonly records: number
}

/** What a heads entry says of its chunk, read back: its summary, its page table and its delta keys. */
export interface ReadSummary extends ChunkSummary {
  /** The first record of each page of the chunk's base records; none when the entry has no page table. */
  readonly pageStarts: PageStarts
  /** The delta records' keys, merged, as a key column (a view into the entry); `undefined` when the entry has none. */
  readonly deltaKeys: Buffer | undefined
}

/** A page table of no page: the chunk is read through its key column. */
export const NO_PAGES: PageStarts = { timestamps: new Float64Array(0), idTags: new Uint32Array(0), records: 0 }

/**
 * Packs the heads of a chunk (ascending, at most one per ten-minute bucket),
 * its record and delta counts, its page table (none, or more than
 * {@link MAX_TABLE_PAGES} pages: no page table) and its delta keys (a key
 * column of the merged delta records, part count the delta count; none when
 * `undefined`).
 */
export function encodeHeads(
  periodStart: number, summary: ChunkSummary, heads: readonly ChunkRecord[], pages: PageStarts = NO_PAGES, deltaKeys?: Uint8Array,
): Buffer {
  const count = pages.timestamps.length <= MAX_TABLE_PAGES ? pages.timestamps.length : 0
  const writer = new ByteWriter(heads.reduce((sum, head) => sum + head.value.length + 64, 24 + 10 * count + (deltaKeys?.length ?? 0)))
  writer.byte(HEADS_VERSION).varint(summary.records).varint(summary.deltas).byte(heads.length)
  for (const head of heads) writer.varint(head.timestamp - periodStart).sized(head.idBytes).sized(head.value)
  writer.varint(count)
  if (count > 0) writer.varint(pages.records)
  for (let page = 0; page < count; page++) writer.varint((pages.timestamps[page] as number) - periodStart).varint(pages.idTags[page] as number)
  writer.sized(deltaKeys ?? EMPTY)
  return writer.finish()
}

const EMPTY = new Uint8Array(0)

/**
 * Visits each head, ascending, with views into `bytes` (the id is UTF-8);
 * returns the chunk's record and delta counts.
 * @throws MalformedBytes when the entry does not parse
 */
export function readHeads(
  bytes: Buffer,
  periodStart: number,
  visit: (timestamp: number, idStart: number, idEnd: number, valueStart: number, valueEnd: number) => void,
): ReadSummary {
  const reader = new ByteReader(bytes)
  const summary = readSummary(reader)
  const heads = reader.byte()
  if (heads > HEADS_PER_PERIOD) throw new MalformedBytes(`${heads} heads, more than a period has`)
  for (let i = 0; i < heads; i++) {
    const timestamp = periodStart + reader.varint()
    const idStart = reader.sized()
    const idEnd = reader.offset
    const valueStart = reader.sized()
    visit(timestamp, idStart, idEnd, valueStart, reader.offset)
  }
  const pageStarts = readPageTable(reader, periodStart)
  const pages = pageStarts.timestamps.length
  const base = pageStarts.records
  // A table places the chunk's base records, ceil(base / pages) a page, none empty; without delta parts they are all its records.
  if (pages > 0 && (heads === 0 || (pages - 1) * Math.ceil(base / pages) >= base || (summary.deltas === 0 ? base !== summary.records : base > summary.records))) {
    throw new MalformedBytes(`a page table of ${pages} pages for ${base} base records, with ${summary.records} records, ${summary.deltas} delta parts and ${heads} heads`)
  }
  const deltaKeys = readDeltaKeys(reader, summary)
  if (!reader.done) throw new MalformedBytes('bytes after the delta keys')
  return { ...summary, pageStarts, deltaKeys }
}

/**
 * The delta keys, checked to be a key column covering the entry's delta
 * parts and no more than the chunk's records (their records are parsed by
 * the reader that merges them).
 * @throws MalformedBytes when they are not
 */
function readDeltaKeys(reader: ByteReader, summary: ChunkSummary): Buffer | undefined {
  const start = reader.sized()
  const bytes = reader.bytes.subarray(start, reader.offset)
  if (bytes.length === 0) return undefined
  if (summary.deltas === 0) throw new MalformedBytes('delta keys without a delta part')
  if (bytes[0] !== KEY_COLUMN_VERSION) throw new MalformedBytes(`delta keys of version ${bytes[0]}, expected ${KEY_COLUMN_VERSION}`)
  const covered = readPartCount(bytes)
  if (covered !== summary.deltas) throw new MalformedBytes(`delta keys of ${covered} delta parts, the entry has ${summary.deltas}`)
  const records = readPartRecordCount(bytes)
  if (records === 0 || records > MAX_DELTA_KEYS || records > summary.records) {
    throw new MalformedBytes(`${records} delta keys, with ${summary.records} records (at most ${MAX_DELTA_KEYS} kept)`)
  }
  return bytes
}

/** @throws MalformedBytes when the table is too long, out of order or outside the period */
function readPageTable(reader: ByteReader, periodStart: number): PageStarts {
  const pages = reader.varint()
  if (pages === 0) return NO_PAGES
  if (pages > MAX_TABLE_PAGES) throw new MalformedBytes(`a page table of ${pages} pages, more than ${MAX_TABLE_PAGES}`)
  const records = reader.varint()
  const timestamps = new Float64Array(pages)
  const idTags = new Uint32Array(pages)
  for (let page = 0, previous = 0; page < pages; page++) {
    const offset = reader.varint()
    if (offset >= PERIOD_MS) throw new MalformedBytes(`page ${page} starts ${offset} ms into the period, past its end`)
    if (offset < previous) throw new MalformedBytes(`page ${page} starts before page ${page - 1}`)
    const tag = reader.varint()
    if (tag > 0xffff_ffff) throw new MalformedBytes(`page ${page}'s id tag ${tag} is not 32 bits`)
    timestamps[page] = periodStart + offset
    idTags[page] = tag
    previous = offset
  }
  return { timestamps, idTags, records }
}

/**
 * The chunk's record count alone, without visiting the heads.
 * @throws MalformedBytes when the entry does not start as one
 */
export function readHeadsCount(bytes: Buffer): number {
  return readSummary(new ByteReader(bytes)).records
}

function readSummary(reader: ByteReader): ChunkSummary {
  readFormatVersion(reader, READABLE)
  const records = reader.varint()
  const deltas = reader.varint()
  if (deltas > MAX_DELTA_PARTS) throw new MalformedBytes(`${deltas} delta parts, more than a chunk holds`)
  return { records, deltas }
}
