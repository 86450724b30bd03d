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
