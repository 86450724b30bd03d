/**
 * Record values:
 * `flags (1 byte) | value (float64 LE) | body`.
 *
 * `symbol`, `timestamp` and `id` are stored beside the value (in the log
 * entry or the chunk column), and `provider` and `providerPublicKey` come
 * from the store's provider, so the value keeps only the rest. `value` has a
 * fixed slot so it comes back bit for bit (msgpack would turn -0 into 0).
 *
 * The usual body is `signature | permawebTx | version` (each a varint length
 * and its bytes), then `[source, extras | null]` packed with msgpack. A
 * signature in canonical base64 (it decodes and re-encodes to the same
 * string) is stored as its bytes, a quarter smaller. A record that msgpack or
 * UTF-8 cannot return unchanged (a `__proto__` key, which msgpackr renames; a
 * lone surrogate; a nested -0) gets a JSON body instead:
 * `[signature, permawebTx, version, source, extras]`.
 */
import { Packr, RESET_BUFFER_MODE } from 'msgpackr'
import { PriceStoreError } from '../errors.js'
import { toExactJson } from '../rules/exact-json.js'
import type { StoredRecord } from '../records/stored-record.js'
import { ABSENT_SIGNATURE } from '../records/signature-presence.js'
import type { PriceRecord, Provider } from '../types.js'
import { ByteReader, ByteWriter } from './bytes.js'

const SIGNATURE_BYTES = 0b01
const JSON_BODY = 0b10
const KNOWN_FLAGS = SIGNATURE_BYTES | JSON_BODY
/** Bytes of a value's header: its flags and the value (a paged chunk's key column keeps them for every record). */
export const VALUE_HEADER_BYTES = 9

// One Packr with its options pinned: plain maps (no shared structures to persist) and float64 numbers.
const packr = new Packr({ useRecords: false, mapsAsObjects: true, useFloat32: 0, moreTypes: false })

/** Where a value sits, for error messages: its record and the stored entry that holds it. */
export interface ValuePlace {
  readonly symbol: string
  readonly timestamp: number
  readonly id: string
  /** The stored entry holding the value (e.g. `chunk BTC@... part 0`), or how to name it: only an error needs it. */
  readonly entry: string | (() => string)
}

/** Packs the stored part of a validated record. */
export function encodeValue(record: StoredRecord): Buffer {
  return writeValue(new ByteWriter(512), record).finish()
}

/** Appends the packed value of a validated record to `writer`. */
export function writeValue(writer: ByteWriter, record: StoredRecord): ByteWriter {
  // Validation walked the body already and says when it is plain; anything else is checked here.
  if (record.plainJson !== true && needsJsonBody(bodyOf(record))) return writeJsonBody(writer, record)
  // The flags byte is patched once the signature is known to be canonical base64 (then stored decoded).
  const flagsAt = writer.length
  writer.byte(0).float64(record.value)
  if (record.signature.length > 0 && writer.base64(record.signature)) writer.patch(flagsAt, SIGNATURE_BYTES)
  else writer.text(record.signature)
  writer.text(record.permawebTx).text(record.version)
  let rest: Uint8Array
  try {
    // RESET_BUFFER_MODE: the packed bytes are copied into `writer` at once, so packr may reuse its buffer for the next
    // value rather than fill and drop an 8 KB buffer every few records.
    rest = packr.pack([record.source, record.extras], RESET_BUFFER_MODE)
  } catch {
    // msgpackr refuses a map of more than 65,535 keys; the JSON body keeps any record.
    return writeJsonBody(writer.truncate(flagsAt), record)
  }
  return writer.bytes(rest)
}

function bodyOf(record: StoredRecord): unknown[] {
  return [record.signature, record.permawebTx, record.version, record.source, record.extras]
}

function writeJsonBody(writer: ByteWriter, record: StoredRecord): ByteWriter {
  return writer.byte(JSON_BODY).float64(record.value).bytes(Buffer.from(toExactJson(bodyOf(record)), 'utf8'))
}

/**
 * The price in a stored value's fixed slot, without decoding the body, or
 * `undefined` when the header is damaged (then {@link decodeValue} says how).
 */
export function peekValue(bytes: Buffer, start: number, end: number): number | undefined {
  if (end - start < VALUE_HEADER_BYTES || ((bytes[start] as number) & ~KNOWN_FLAGS) !== 0) return undefined
  return bytes.readDoubleLE(start + 1)
}

/**
 * Rebuilds a full record from its identity and stored value bytes
 * `bytes[start..end)`; with `minutes`, the range form's record, `minutes` last.
 * @throws PriceStoreError `PRICE_CORRUPT_VALUE`, naming the record and entry
 */
export function decodeValue(
  bytes: Buffer,
  start: number,
  end: number,
  place: ValuePlace,
  provider: Provider,
  minutes?: number,
): PriceRecord {
  let signature: unknown
  let permawebTx: unknown
  let version: unknown
  let source: unknown
  let extras: unknown
  if (end - start < VALUE_HEADER_BYTES) throw corrupt(place, 'is shorter than its header')
  const flags = bytes[start] as number
  if ((flags & ~KNOWN_FLAGS) !== 0) throw corrupt(place, `has unknown flags ${flags}`)
  try {
    if ((flags & JSON_BODY) !== 0) {
      const body: unknown = JSON.parse(bytes.toString('utf8', start + VALUE_HEADER_BYTES, end))
      if (!Array.isArray(body) || body.length !== 5) throw new Error('the JSON body is not a 5-element array')
      ;[signature, permawebTx, version, source, extras] = body
    } else {
      let rest: unknown
      ;[signature, permawebTx, version, rest] = readUsualBody(bytes, start, end, flags)
      if (!Array.isArray(rest) || rest.length !== 2) throw new Error('the packed rest is not a 2-element array')
      ;[source, extras] = rest
    }
  } catch (cause) {
    throw corrupt(place, 'cannot be decoded', cause)
  }
  if (typeof signature !== 'string' || typeof permawebTx !== 'string' || typeof version !== 'string' || !isObject(source) ||
    (extras !== null && !isObject(extras))) {
    throw corrupt(place, 'does not hold a record body')
  }
  // An empty signature slot is a record written without an Arweave signature (records/signature-presence.ts): it comes back without one.
  const record: Record<string, unknown> = signature === ABSENT_SIGNATURE
    ? { id: place.id, symbol: place.symbol, provider: provider.id, value: bytes.readDoubleLE(start + 1), permawebTx, version, source, timestamp: place.timestamp }
    : {
        id: place.id,
        symbol: place.symbol,
        provider: provider.id,
        value: bytes.readDoubleLE(start + 1),
        signature,
        permawebTx,
        version,
        source,
        timestamp: place.timestamp,
      }
  if (extras !== null) {
    for (const field of Object.keys(extras)) {
      Object.defineProperty(record, field, { value: extras[field], enumerable: true, writable: true, configurable: true })
    }
  }
  record.providerPublicKey = provider.publicKey
  if (minutes !== undefined) record.minutes = minutes
  return record as PriceRecord
}

/**
 * The JSON text of the record a stored value holds, exactly as
 * `toExactJson` writes the record {@link decodeValue} returns, built from
 * the bytes without making the record: `prefix` (the record's JSON up to
 * and including its `provider` member, without a comma after it), the
 * value's members, then `suffix` (`,"timestamp":...` and what follows,
 * closing brace included). Serialising a record this way skips making,
 * freezing and walking it. `undefined` when the value needs the general
 * path (a JSON body, extra fields, anything unexpected), which the caller
 * then takes, with its errors.
 */
export function valueJson(bytes: Buffer, start: number, end: number, prefix: string, suffix: string): string | undefined {
  if (end - start < VALUE_HEADER_BYTES) return undefined
  const flags = bytes[start] as number
  if ((flags & ~SIGNATURE_BYTES) !== 0) return undefined
  try {
    const value = bytes.readDoubleLE(start + 1)
    const [signature, permawebTx, version, rest] = readUsualBody(bytes, start, end, flags)
    if (!Array.isArray(rest) || rest.length !== 2 || rest[1] !== null || !isObject(rest[0])) return undefined
    // A -0 anywhere in the body takes the JSON body (needsJsonBody): a msgpack source has none, so JSON.stringify is exact.
    const signed = signature === ABSENT_SIGNATURE ? '' : `,"signature":${JSON.stringify(signature)}`
    return `${prefix},"value":${Object.is(value, -0) ? '-0' : JSON.stringify(value)}${signed},"permawebTx":${JSON.stringify(permawebTx)},"version":${JSON.stringify(version)},"source":${JSON.stringify(rest[0])}${suffix}`
  } catch {
    return undefined
  }
}

/**
 * The parts of a usual (not JSON) body after the header: the signature
 * (from its bytes when stored as base64), `permawebTx`, `version`, and the
 * msgpack rest `[source, extras]` unchecked.
 * @throws MalformedBytes (or msgpackr's error) when the body does not parse
 */
function readUsualBody(bytes: Buffer, start: number, end: number, flags: number): [string, string, string, unknown] {
  const reader = new ByteReader(bytes, start + VALUE_HEADER_BYTES, end)
  const signatureStart = reader.sized()
  const signature = bytes.toString((flags & SIGNATURE_BYTES) !== 0 ? 'base64' : 'utf8', signatureStart, reader.offset)
  const permawebTx = reader.text()
  const version = reader.text()
  return [signature, permawebTx, version, unpackRest(bytes, reader.offset, end)]
}

/** Names a record and its entry in an error message and `details.key`. */
export function describePlace(place: ValuePlace): string {
  return `${place.symbol}@${place.timestamp}#${place.id} in ${typeof place.entry === 'string' ? place.entry : place.entry()}`
}

// msgpackr allocates a DataView for every new source buffer and hangs it on the buffer; unpacking
// from one reused buffer skips that per record (msgpackr's own advice for database reads). It
// returns strings and objects, never views of its source, so reusing the bytes is safe.
let scratch = Buffer.allocUnsafeSlow(4096)

function unpackRest(bytes: Buffer, start: number, end: number): unknown {
  const length = end - start
  if (length > scratch.length) scratch = Buffer.allocUnsafeSlow(Math.max(length, scratch.length * 2))
  bytes.copy(scratch, 0, start, end)
  return packr.unpack(scratch, { start: 0, end: length })
}

function corrupt(place: ValuePlace, problem: string, cause?: unknown): PriceStoreError {
  const key = describePlace(place)
  return new PriceStoreError('PRICE_CORRUPT_VALUE', `value of ${key} ${problem}`, { cause, details: { key } })
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function needsJsonBody(value: unknown): boolean {
  if (typeof value === 'number') return Object.is(value, -0)
  if (typeof value === 'string') return !value.isWellFormed()
  if (typeof value !== 'object' || value === null) return false
  if (Array.isArray(value)) return value.some(needsJsonBody)
  for (const field of Object.keys(value)) {
    if (field === '__proto__' || !field.isWellFormed()) return true
    if (needsJsonBody((value as Record<string, unknown>)[field])) return true
  }
  return false
}
