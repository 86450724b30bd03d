/**
 * Record keys: `symbol (UTF-8) | 0x00 | timestamp (uint64 big-endian) | id (UTF-8)`.
 *
 * Byte order equals (symbol, timestamp, id) order with strings compared by
 * UTF-8 bytes, so one symbol's records are one contiguous range sorted by
 * time. Symbols never contain control characters, so the 0x00 separator sorts
 * before any symbol byte and `BTC` can never run into `BTC-USD`.
 */

const SEPARATOR = 0x00
const TIMESTAMP_BYTES = 8
const TWO_POW_32 = 2 ** 32

/** The bytes every key of `symbol` starts with. */
export function symbolPrefix(symbol: string): Buffer {
  const symbolBytes = Buffer.byteLength(symbol, 'utf8')
  const prefix = Buffer.allocUnsafe(symbolBytes + 1)
  prefix.write(symbol, 0, 'utf8')
  prefix[symbolBytes] = SEPARATOR
  return prefix
}

/** The key of one record. */
export function encodeKey(symbol: string, timestamp: number, id: string): Buffer {
  const symbolBytes = Buffer.byteLength(symbol, 'utf8')
  const idBytes = Buffer.byteLength(id, 'utf8')
  const key = Buffer.allocUnsafe(symbolBytes + 1 + TIMESTAMP_BYTES + idBytes)
  key.write(symbol, 0, 'utf8')
  key[symbolBytes] = SEPARATOR
  writeTimestamp(key, symbolBytes + 1, timestamp)
  key.write(id, symbolBytes + 1 + TIMESTAMP_BYTES, 'utf8')
  return key
}

/**
 * Key bounds of the records of `symbol` with `from ≤ timestamp ≤ to`
 * (each bound optional), for an iterator's `gte`/`lt`.
 */
export function symbolRange(symbol: string, from = 0, to = Number.MAX_SAFE_INTEGER): { gte: Buffer; lt: Buffer } {
  const prefix = symbolPrefix(symbol)
  return { gte: withTimestamp(prefix, from), lt: withTimestamp(prefix, to + 1) }
}

/** Reads the timestamp of a key whose symbol prefix is `prefixLength` bytes long (symbol + separator). */
export function readTimestamp(key: Uint8Array, prefixLength: number): number {
  const view = new DataView(key.buffer, key.byteOffset + prefixLength, TIMESTAMP_BYTES)
  return view.getUint32(0) * TWO_POW_32 + view.getUint32(4)
}

/** Splits a key back into its parts; `undefined` when the bytes are not a record key. */
export function decodeKey(key: Uint8Array): { symbol: string; timestamp: number; id: string } | undefined {
  const separator = key.indexOf(SEPARATOR)
  if (separator < 1 || key.length < separator + 1 + TIMESTAMP_BYTES) return undefined
  const bytes = Buffer.from(key.buffer, key.byteOffset, key.byteLength)
  return {
    symbol: bytes.toString('utf8', 0, separator),
    timestamp: readTimestamp(key, separator + 1),
    id: bytes.toString('utf8', separator + 1 + TIMESTAMP_BYTES),
  }
}

/** Renders a key for an error message: symbol, timestamp and id when it parses, hex otherwise. */
export function describeKey(key: Uint8Array): string {
  const parts = decodeKey(key)
  if (parts === undefined) return `0x${Buffer.from(key).toString('hex')}`
  return `${parts.symbol}@${parts.timestamp}#${parts.id}`
}

function withTimestamp(prefix: Buffer, timestamp: number): Buffer {
  const bound = Buffer.allocUnsafe(prefix.length + TIMESTAMP_BYTES)
  prefix.copy(bound, 0)
  writeTimestamp(bound, prefix.length, timestamp)
  return bound
}

function writeTimestamp(target: Buffer, offset: number, timestamp: number): void {
  // Timestamps are safe integers (< 2^53; `to + 1` may equal 2^53), so the split is exact.
  const high = Math.floor(timestamp / TWO_POW_32)
  target.writeUInt32BE(high, offset)
  target.writeUInt32BE(timestamp - high * TWO_POW_32, offset + 4)
}
