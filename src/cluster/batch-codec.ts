/**
 * The bytes of a batch in the replication log. A batch's records are packed
 * as one log entry (keys/log-codec.ts, the store's own record bytes), so a
 * node applies exactly the records that were validated, bit for bit and in
 * the batch's order. A batch that fits one message travels inline in its
 * commit message; a larger one is cut into parts, each a log entry of its
 * own, and its commit lists their positions, so it is applied whole (when
 * the commit comes) or not at all (a part without a commit is never applied).
 *
 * Commit message: `version (1) · kind (1) · ...`, kind 0 then the batch's
 * log entry; kind 1 then a varint part count and each part's position (u64 BE).
 */
import { createHash } from 'node:crypto'
import { ByteReader, ByteWriter, MalformedBytes } from '../keys/bytes.js'
import { LogEntryWriter, PLACE_FIELDS, readLogEntry } from '../keys/log-codec.js'
import { decodeValue } from '../keys/value-codec.js'
import type { StoredRecord } from '../records/stored-record.js'
import { PriceStoreError } from '../errors.js'
import type { PriceRecord, Provider } from '../types.js'

const COMMIT_VERSION = 1
const INLINE = 0
const PARTS = 1
/** Room left in a message for the commit header and the log's own framing. */
const HEADROOM = 1024
/**
 * Largest batch carried inline in its commit. Larger ones go as parts even when one message could hold them:
 * nodes read parts by position, all at once, while commits come through the consumer one after another, and
 * JetStream delivered megabyte messages to a consumer at about 100-300 ms each (a new node caught up at 6k
 * records/s against 35k+ with parts).
 */
export const INLINE_MAX_BYTES = 64 * 1024

/** A batch ready to append: inline in one commit, or as parts and a commit naming them. */
export interface EncodedBatch {
  /** Deterministic id of the batch (its provider and bytes): a retried append of the same batch is recognised. */
  readonly id: string
  /** The commit's bytes when the batch travels inline. */
  readonly inline: Uint8Array | undefined
  /** The parts' bytes when it does not. */
  readonly parts: readonly Uint8Array[]
}

/** What a commit message says. */
export type DecodedCommit =
  | { readonly kind: 'inline'; readonly entry: Buffer }
  | { readonly kind: 'parts'; readonly parts: readonly number[] }

/**
 * Packs validated records for the log, cutting them into parts when they do not fit `maxMessageBytes`.
 * @throws PriceStoreError `PRICE_INVALID_RECORD` (with `details.index`) for a record too large for one message
 */
export function encodeBatch(records: readonly StoredRecord[], provider: Provider, maxMessageBytes: number): EncodedBatch {
  const entry = new LogEntryWriter()
  for (const record of records) entry.add(record.symbol, record.timestamp, record.id, record)
  const { bytes, places } = entry.finish()
  const id = batchIdOf(provider.id, [bytes])
  const limit = Math.max(HEADROOM, maxMessageBytes - HEADROOM)
  if (bytes.length + 2 <= Math.min(limit, INLINE_MAX_BYTES)) {
    return { id, inline: new ByteWriter(bytes.length + 2).byte(COMMIT_VERSION).byte(INLINE).bytes(bytes).finish(), parts: [] }
  }
  // An entry is its version byte then its records one after another, so a part is the version byte and a run of
  // whole records cut out of the batch's entry: nothing is encoded twice.
  const version = bytes.subarray(0, 1)
  const parts: Buffer[] = []
  let start = 1
  let end = 1
  for (let index = 0; index < places.symbols.length; index++) {
    const valueEnd = places.numbers[index * PLACE_FIELDS + 4] as number
    if (valueEnd - end + 1 > limit) throw tooLarge(index, valueEnd - end, maxMessageBytes)
    if (valueEnd - start + 1 > limit && end > start) {
      parts.push(Buffer.concat([version, bytes.subarray(start, end)]))
      start = end
    }
    end = valueEnd
  }
  parts.push(Buffer.concat([version, bytes.subarray(start, end)]))
  return { id, inline: undefined, parts }
}

/**
 * The id of a batch: SHA-256 (hex) of its provider's id, a zero byte and its log entry's bytes, given as the
 * chunks they come in (an inline commit's entry, or a parts commit's version byte and each part's records).
 */
export function batchIdOf(providerId: string, chunks: readonly Uint8Array[]): string {
  const hash = createHash('sha256').update(providerId).update('\0')
  for (const chunk of chunks) hash.update(chunk)
  return hash.digest('hex')
}

/**
 * The chunks whose id a batch sent as parts has: the parts' shared version byte, then each part's records (a part is
 * the version byte and a run of the batch's records: see {@link encodeBatch}).
 */
export function partsChunks(parts: readonly Uint8Array[]): Uint8Array[] {
  if (parts.length === 0) return []
  return [parts[0]!.subarray(0, 1), ...parts.map((part) => part.subarray(1))]
}

/** A record that does not fit in one message of the log, even alone. */
function tooLarge(index: number, bytes: number, maxMessageBytes: number): PriceStoreError {
  return new PriceStoreError('PRICE_INVALID_RECORD',
    `record ${index} takes ${bytes} bytes, more than one message of the replication log holds (${maxMessageBytes} bytes, NATS max_payload)`,
    { details: { index } })
}

/** The commit message of a batch sent as parts, once the parts have their positions. */
export function encodePartsCommit(positions: readonly number[]): Uint8Array {
  const writer = new ByteWriter(16 + positions.length * 8).byte(COMMIT_VERSION).byte(PARTS).varint(positions.length)
  for (const position of positions) writer.uint64(position)
  return writer.finish()
}

/**
 * Reads a commit message.
 * @throws MalformedBytes when it is not one this release writes
 */
export function decodeCommit(data: Uint8Array): DecodedCommit {
  const bytes = Buffer.from(data.buffer, data.byteOffset, data.byteLength)
  const reader = new ByteReader(bytes)
  const version = reader.byte()
  if (version !== COMMIT_VERSION) throw new MalformedBytes(`commit version ${version} (this release reads ${COMMIT_VERSION})`)
  const kind = reader.byte()
  if (kind === INLINE) return { kind: 'inline', entry: bytes.subarray(reader.offset) }
  if (kind !== PARTS) throw new MalformedBytes(`commit kind ${kind}`)
  const parts: number[] = []
  for (let count = reader.varint(); parts.length < count;) parts.push(reader.uint64())
  return { kind: 'parts', parts }
}

/**
 * The records of one log entry (a batch or a part), as `putBatch` takes them.
 * @throws MalformedBytes, PriceStoreError `PRICE_CORRUPT_VALUE` when the entry does not decode
 */
export function decodeEntry(data: Uint8Array, provider: Provider, where: string): PriceRecord[] {
  const bytes = Buffer.from(data.buffer, data.byteOffset, data.byteLength)
  const records: PriceRecord[] = []
  readLogEntry(bytes, (symbol, timestamp, idStart, idEnd, valueStart, valueEnd) => {
    const id = bytes.toString('utf8', idStart, idEnd)
    records.push(decodeValue(bytes, valueStart, valueEnd, { symbol, timestamp, id, entry: where }, provider))
  })
  return records
}

/**
 * A batch as one inline commit whatever its size, and its id (as {@link encodeBatch} gives it), for a log with no
 * message limit: a follower reading its primary's live stream, where one commit is one event.
 */
export function encodeInlineCommit(records: readonly StoredRecord[], provider: Provider): { readonly id: string; readonly data: Uint8Array } {
  const { id, inline, parts } = encodeBatch(records, provider, Number.MAX_SAFE_INTEGER)
  if (inline !== undefined) return { id, data: inline }
  // With no message limit, a batch too large to go inline comes back as one part: its whole log entry.
  const entry = parts[0] as Uint8Array
  return { id, data: new ByteWriter(entry.length + 2).byte(COMMIT_VERSION).byte(INLINE).bytes(entry).finish() }
}
