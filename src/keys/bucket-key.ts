/**
 * The bucket index: for each symbol and each of a few fixed, epoch-aligned
 * bucket widths, a pointer to the latest record of every non-empty bucket.
 *
 * Key: `symbol (UTF-8) | 0x00 | level (1 byte) | bucket number (uint64 BE)`.
 * Value at level 0 (1 min): `timestamp (uint64 BE) | id (UTF-8)`, the rest
 * of the record's key. At the coarser levels, which hold one entry per 60 or
 * more records, the entry also carries a copy of the record's value:
 * `timestamp (uint64 BE) | id length (uint16 BE) | id | value`, so a sparse
 * range reads one contiguous index range and no record at all.
 *
 * A range sampled at an interval that is a multiple of a level's width reads
 * that level's pointers instead of every record: the latest record of an
 * interval bucket is the latest of the latest records of the level buckets
 * inside it.
 */

/** Bucket widths in ms, by level number. */
export const BUCKET_LEVELS: readonly number[] = Object.freeze([60_000, 600_000, 3_600_000, 86_400_000])

const TWO_POW_32 = 2 ** 32

/** The widest level whose width divides `interval`, or `undefined` when none does. */
export function levelFor(interval: number): number | undefined {
  for (let level = BUCKET_LEVELS.length - 1; level >= 0; level--) {
    if (interval % (BUCKET_LEVELS[level] as number) === 0) return level
  }
  return undefined
}

/** The index key of one bucket of one level of a symbol. */
export function encodeBucketKey(symbol: string, level: number, bucket: number): Buffer {
  const symbolBytes = Buffer.byteLength(symbol, 'utf8')
  const key = Buffer.allocUnsafe(symbolBytes + 10)
  key.write(symbol, 0, 'utf8')
  key[symbolBytes] = 0x00
  key[symbolBytes + 1] = level
  writeUint64(key, symbolBytes + 2, bucket)
  return key
}

/** The bucket number of an index key (its last 8 bytes). */
export function readBucketNumber(key: Uint8Array): number {
  const bytes = Buffer.from(key.buffer, key.byteOffset, key.byteLength)
  return bytes.readUInt32BE(bytes.length - 8) * TWO_POW_32 + bytes.readUInt32BE(bytes.length - 4)
}

/** The first level whose entries carry a copy of the record's value. */
export const FIRST_COPY_LEVEL = 1

/** A bucket head as stored: which record, and at copying levels its value. */
export interface BucketHead {
  readonly timestamp: number
  readonly id: string
  readonly value?: Uint8Array
}

/** The index entry for a bucket's latest record; `recordValue` is kept from {@link FIRST_COPY_LEVEL} up. */
export function encodeBucketValue(level: number, timestamp: number, id: string, recordValue: Uint8Array): Buffer {
  const idBytes = Buffer.byteLength(id, 'utf8')
  if (level < FIRST_COPY_LEVEL) {
    const value = Buffer.allocUnsafe(8 + idBytes)
    writeUint64(value, 0, timestamp)
    value.write(id, 8, 'utf8')
    return value
  }
  const value = Buffer.allocUnsafe(10 + idBytes + recordValue.length)
  writeUint64(value, 0, timestamp)
  value.writeUInt16BE(idBytes, 8)
  value.write(id, 10, 'utf8')
  value.set(recordValue, 10 + idBytes)
  return value
}

/** Reads an index entry back; `undefined` when the bytes cannot be one of `level`. */
export function decodeBucketValue(level: number, value: Uint8Array): BucketHead | undefined {
  if (value.length < 8) return undefined
  const bytes = Buffer.from(value.buffer, value.byteOffset, value.byteLength)
  const timestamp = bytes.readUInt32BE(0) * TWO_POW_32 + bytes.readUInt32BE(4)
  if (level < FIRST_COPY_LEVEL) return { timestamp, id: bytes.toString('utf8', 8) }
  if (value.length < 10) return undefined
  const idEnd = 10 + bytes.readUInt16BE(8)
  if (idEnd > value.length) return undefined
  return { timestamp, id: bytes.toString('utf8', 10, idEnd), value: bytes.subarray(idEnd) }
}

/**
 * The index level of minute directories (format 2): for each minute of a
 * symbol, the (timestamp, id) of every record in it, ascending, so the
 * latest record up to any time inside the minute is found with synchronous
 * gets. Not a sampling level: {@link levelFor} never picks it.
 */
export const DIRECTORY_LEVEL = 4

/**
 * A minute with more records than this keeps an overflow mark instead of a
 * directory, so a high-frequency feed does not rewrite a long list on every
 * batch; the latest record up to a time in that minute is then sought.
 */
export const MAX_DIRECTORY_ENTRIES = 256

/** One record of a minute directory. */
export interface DirectoryEntry {
  readonly timestamp: number
  readonly id: string
}

/** A minute's directory as stored: its entries in (timestamp, id) order, or the overflow mark. */
export type MinuteDirectory = readonly DirectoryEntry[] | 'overflow'

const OVERFLOW_COUNT = 0xffff

/** `count (uint16 BE, 0xFFFF = overflow) | (timestamp (uint64 BE) | id length (uint16 BE) | id)*` */
export function encodeDirectory(directory: MinuteDirectory): Buffer {
  if (directory === 'overflow') return Buffer.from([0xff, 0xff])
  let size = 2
  for (const { id } of directory) size += 10 + Buffer.byteLength(id, 'utf8')
  const out = Buffer.allocUnsafe(size)
  out.writeUInt16BE(directory.length, 0)
  let offset = 2
  for (const { timestamp, id } of directory) {
    writeUint64(out, offset, timestamp)
    const idBytes = out.write(id, offset + 10, 'utf8')
    out.writeUInt16BE(idBytes, offset + 8)
    offset += 10 + idBytes
  }
  return out
}

/** Reads a minute directory back; `undefined` when the bytes are not one. */
export function decodeDirectory(value: Uint8Array): MinuteDirectory | undefined {
  const bytes = Buffer.from(value.buffer, value.byteOffset, value.byteLength)
  if (bytes.length < 2) return undefined
  const count = bytes.readUInt16BE(0)
  if (count === OVERFLOW_COUNT) return bytes.length === 2 ? 'overflow' : undefined
  const entries: DirectoryEntry[] = []
  let offset = 2
  for (let i = 0; i < count; i++) {
    if (offset + 10 > bytes.length) return undefined
    const timestamp = bytes.readUInt32BE(offset) * TWO_POW_32 + bytes.readUInt32BE(offset + 4)
    const idEnd = offset + 10 + bytes.readUInt16BE(offset + 8)
    if (idEnd > bytes.length) return undefined
    entries.push({ timestamp, id: bytes.toString('utf8', offset + 10, idEnd) })
    offset = idEnd
  }
  return offset === bytes.length ? entries : undefined
}

/** Whether index entries of `level` carry a copy of the record (the sampling levels from 10 min up). */
export function isCopyLevel(level: number): boolean {
  return level >= FIRST_COPY_LEVEL && level < BUCKET_LEVELS.length
}

function writeUint64(target: Buffer, offset: number, n: number): void {
  const high = Math.floor(n / TWO_POW_32)
  target.writeUInt32BE(high, offset)
  target.writeUInt32BE(n - high * TWO_POW_32, offset + 4)
}

/** Renders an index key for an error message: `symbol/level N/bucket B`, or hex when it does not parse. */
export function describeBucketKey(key: Uint8Array): string {
  const bytes = Buffer.from(key.buffer, key.byteOffset, key.byteLength)
  const separator = bytes.indexOf(0x00)
  if (separator < 1 || bytes.length !== separator + 10) return `0x${bytes.toString('hex')}`
  const bucket = readBucketNumber(bytes)
  return `${bytes.toString('utf8', 0, separator)}/level ${bytes[separator + 1]}/bucket ${bucket}`
}
