/**
 * The bucket index: for each symbol and each of a few fixed, epoch-aligned
 * bucket widths, a pointer to the latest record of every non-empty bucket.
 *
 * Key: `symbol (UTF-8) | 0x00 | level (1 byte) | bucket number (uint64 BE)`.
 * Value: `timestamp (uint64 BE) | id (UTF-8)`, the rest of the record's key.
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

/** The pointer to a record: its timestamp and id. */
export function encodeBucketValue(timestamp: number, id: string): Buffer {
  const value = Buffer.allocUnsafe(8 + Buffer.byteLength(id, 'utf8'))
  writeUint64(value, 0, timestamp)
  value.write(id, 8, 'utf8')
  return value
}

/** Reads a pointer back; `undefined` when the bytes are too short to be one. */
export function decodeBucketValue(value: Uint8Array): { timestamp: number; id: string } | undefined {
  if (value.length < 8) return undefined
  const bytes = Buffer.from(value.buffer, value.byteOffset, value.byteLength)
  return { timestamp: bytes.readUInt32BE(0) * TWO_POW_32 + bytes.readUInt32BE(4), id: bytes.toString('utf8', 8) }
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
  const bucket = bytes.readUInt32BE(separator + 2) * TWO_POW_32 + bytes.readUInt32BE(separator + 6)
  return `${bytes.toString('utf8', 0, separator)}/level ${bytes[separator + 1]}/bucket ${bucket}`
}
