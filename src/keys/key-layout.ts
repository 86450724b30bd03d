/**
 * Every key of the store's format, and the only place that knows their bytes.
 *
 * Time is divided into periods of {@link PERIOD_MS} (one UTC hour). Keys that
 * receive bulk writes start with the period, so every write lands after older
 * data and LevelDB's compaction never rewrites history (the sublevel names
 * are those of `SUBLEVELS` in sublevels.ts):
 *
 * | sublevel | key | value |
 * |---|---|---|
 * | `l` log | `period (u32 BE) · sequence (u64 BE): the commit position` | one batch's records of that period (log-codec) |
 * | `c` chunks | `period (u32 BE) · symbol (UTF-8) · 0x00 · part (u16 BE)` | a sealed chunk part, or from `DELTA_PART` a delta part (chunk-codec) |
 * | `h` heads | `symbol (UTF-8) · 0x00 · period (u32 BE)` | the chunk's 10-minute heads, record count and delta count (heads-codec) |
 * | `s` symbols | `symbol (UTF-8)` | empty |
 * | `j` journal | `commit position (u64 BE)` | the commit's id and the keys of one batch's records, in batch order (journal-codec) |
 * | `m` meta | `format`, `provider`, `journal-floor`, `cursor-secret` (UTF-8, meta-keys.ts) | `"9"`, the provider as JSON, decimal text, base64url |
 * | `w` verdicts | `symbol (UTF-8) · 0x00 · period (u32 BE) · commit position (u64 BE)` | the verdicts one commit wrote for the symbol's records of that period (verdict-group-codec) |
 *
 * Symbols never contain control characters, so the 0x00 after a symbol sorts
 * before any symbol byte: `BTC` never runs into `BTC-USD`.
 */
import { MalformedBytes, asBuffer, readUint64, writeUint64 } from './bytes.js'

/** The width of a period, the unit of sealing: one hour. */
export const PERIOD_MS = 3_600_000
/** The width of a head bucket inside a period: ten minutes, six per period. */
export const HEAD_MS = 600_000
/** Head buckets per period. */
export const HEADS_PER_PERIOD = PERIOD_MS / HEAD_MS

const SEPARATOR = 0x00

/** The period holding a timestamp. Periods of safe timestamps fit in 32 bits (2^53 / 3.6e6 < 2^32). */
export function periodOf(timestamp: number): number {
  return Math.floor(timestamp / PERIOD_MS)
}

/** A log entry's key: the period of its records, then the commit position of the batch that wrote it. */
export function logKey(period: number, sequence: number): Buffer {
  const key = Buffer.allocUnsafe(12)
  key.writeUInt32BE(period, 0)
  writeUint64(key, 4, sequence)
  return key
}

/** The period and sequence of a log key. */
export function readLogKey(key: Uint8Array): { period: number; sequence: number } {
  if (key.length !== 12) throw new MalformedBytes(`a log key has 12 bytes, this one ${key.length}`)
  const bytes = asBuffer(key)
  return { period: bytes.readUInt32BE(0), sequence: readUint64(bytes, 4) }
}

/**
 * The part number of a chunk's first delta part: base parts count up from 0,
 * delta parts (records that reached the hour after it was sealed)
 * from here, so both sort after each other under the chunk's prefix and a
 * key range over parts 0..0xffff holds all of them.
 */
export const DELTA_PART = 0x8000
/**
 * The part number of a chunk's **key column**: its base records'
 * timestamps and ids, no values (a chunk part whose values are empty),
 * written with a chunk of one part. Sealing a delta part reads it (a few KB)
 * instead of the chunk to count the records the delta adds.
 */
export const KEYS_PART = 0x7fff
/** Delta parts a chunk holds at most: the next seal of the hour rewrites it whole. */
export const MAX_DELTA_PARTS = 16

/** The key of part `part` (a base part below {@link DELTA_PART}, a delta part from it) of the chunk of `symbol` in `period`. */
export function chunkKey(period: number, symbol: string, part: number): Buffer {
  const symbolBytes = Buffer.byteLength(symbol, 'utf8')
  const key = Buffer.allocUnsafe(4 + symbolBytes + 1 + 2)
  key.writeUInt32BE(period, 0)
  key.write(symbol, 4, 'utf8')
  key[4 + symbolBytes] = SEPARATOR
  key.writeUInt16BE(part, 5 + symbolBytes)
  return key
}

/** The period of a chunk key: its first four bytes. */
export function readChunkPeriod(key: Uint8Array): number {
  if (key.length < 4) throw new MalformedBytes(`a chunk key has at least 4 bytes, this one ${key.length}`)
  return asBuffer(key).readUInt32BE(0)
}

/** The first chunk key of `period`: every chunk key of earlier periods sorts before it. */
export function chunkPeriodStart(period: number): Buffer {
  const key = Buffer.allocUnsafe(4)
  key.writeUInt32BE(period, 0)
  return key
}

/** The period, symbol and part of a chunk key. */
export function readChunkKey(key: Uint8Array): { period: number; symbol: string; part: number } {
  if (key.length < 7) throw new MalformedBytes(`a chunk key has at least 7 bytes, this one ${key.length}`)
  const bytes = asBuffer(key)
  return { period: bytes.readUInt32BE(0), symbol: bytes.toString('utf8', 4, bytes.length - 3), part: bytes.readUInt16BE(bytes.length - 2) }
}

/** The key of the heads of the chunk of `symbol` in `period`. */
export function headsKey(symbol: string, period: number): Buffer {
  const symbolBytes = Buffer.byteLength(symbol, 'utf8')
  const key = Buffer.allocUnsafe(symbolBytes + 1 + 4)
  key.write(symbol, 0, 'utf8')
  key[symbolBytes] = SEPARATOR
  key.writeUInt32BE(period, symbolBytes + 1)
  return key
}

/** Bounds of the heads keys of `symbol` for periods `first..last`, both inclusive. */
export function headsRange(symbol: string, first: number, last: number): { gte: Buffer; lte: Buffer } {
  return { gte: headsKey(symbol, first), lte: headsKey(symbol, last) }
}

/** The period of a heads key. */
export function readHeadsPeriod(key: Uint8Array): number {
  const bytes = asBuffer(key)
  return bytes.readUInt32BE(bytes.length - 4)
}

/** The symbol of a heads key: the UTF-8 bytes before its separator. */
export function readHeadsSymbol(key: Uint8Array): string {
  if (key.length < 5) throw new MalformedBytes(`a heads key has at least 5 bytes, this one ${key.length}`)
  return asBuffer(key).toString('utf8', 0, key.length - 5)
}

/**
 * The key of a **verdict group**: the signature verdicts one commit wrote for a symbol's records in one period.
 * Keys of a symbol sort by period, then by commit position, so a later group's verdict of a record replaces an
 * earlier one's.
 */
export function verdictGroupKey(symbol: string, period: number, position: number): Buffer {
  const symbolBytes = Buffer.byteLength(symbol, 'utf8')
  const key = Buffer.allocUnsafe(symbolBytes + 1 + 4 + 8)
  key.write(symbol, 0, 'utf8')
  key[symbolBytes] = SEPARATOR
  key.writeUInt32BE(period, symbolBytes + 1)
  writeUint64(key, symbolBytes + 5, position)
  return key
}

/** Bounds of the verdict group keys of `symbol` whose periods hold timestamps of `from..to`, both inclusive. */
export function verdictGroupRange(symbol: string, from: number, to: number): { gte: Buffer; lt: Buffer } {
  return { gte: verdictGroupKey(symbol, periodOf(from), 0), lt: verdictGroupKey(symbol, periodOf(to) + 1, 0) }
}

/**
 * The symbol of a verdict group key (its bytes before the separator, period and position: its last 13) and the
 * bounds of every group key of that symbol, taken from the key's own bytes, so `lt` is past `key` whatever they hold.
 * @throws MalformedBytes for a key too short or without the separator in its place
 */
export function verdictGroupSymbol(key: Uint8Array): { symbol: string; gte: Buffer; lt: Buffer } {
  if (key.length < 14 || key[key.length - 13] !== SEPARATOR) throw new MalformedBytes(`not a verdict group key (${key.length} bytes, no separator before the last 12)`)
  const symbolBytes = asBuffer(key).subarray(0, key.length - 13)
  return { symbol: symbolBytes.toString('utf8'), gte: Buffer.concat([symbolBytes, Buffer.of(SEPARATOR)]), lt: Buffer.concat([symbolBytes, Buffer.of(SEPARATOR + 1)]) }
}

/** The period and commit position of a verdict group key: its last 12 bytes. */
export function readVerdictGroupKey(key: Uint8Array): { period: number; position: number } {
  if (key.length < 14) throw new MalformedBytes(`a verdict group key has at least 14 bytes, this one ${key.length}`)
  const bytes = asBuffer(key)
  return { period: bytes.readUInt32BE(key.length - 12), position: readUint64(bytes, key.length - 8) }
}

/** A symbol as a key of the symbols sublevel. */
export function symbolKey(symbol: string): Buffer {
  return Buffer.from(symbol, 'utf8')
}

/** A journal entry's key: the commit position, so entries sort in commit order. */
export function journalKey(position: number): Buffer {
  const key = Buffer.allocUnsafe(8)
  writeUint64(key, 0, position)
  return key
}

/** The commit position of a journal key. */
export function readJournalKey(key: Uint8Array): number {
  if (key.length !== 8) throw new MalformedBytes(`a journal key has 8 bytes, this one ${key.length}`)
  return readUint64(key, 0)
}

/** Names a stored entry in an error message. */
export function describeChunk(period: number, symbol: string, part: number): string {
  const name = part >= DELTA_PART ? `delta part ${part - DELTA_PART}` : part === KEYS_PART ? 'key column' : `part ${part}`
  return `chunk ${symbol}@${period * PERIOD_MS}+${PERIOD_MS}ms ${name}`
}

/** Names a heads entry in an error message. */
export function describeHeads(symbol: string, period: number): string {
  return `heads ${symbol}@${period * PERIOD_MS}+${PERIOD_MS}ms`
}

/** Names a journal entry in an error message. */
export function describeJournal(position: number): string {
  return `journal entry ${position}`
}

/** Names a log entry in an error message. */
export function describeLog(period: number, sequence: number): string {
  return `log entry ${sequence} of period ${period * PERIOD_MS}+${PERIOD_MS}ms`
}
