import { Packr } from 'msgpackr'
import { PriceStoreError } from '../errors.js'
import type { StoredRecord } from '../records/stored-record.js'
import type { PriceRecord, Provider } from '../types.js'
import { toExactJson } from '../engine/exact-json.js'
import { describeKey } from './key-codec.js'

/**
 * Record values:
 * `format (1 byte) | body kind (1 byte) | value (float64 LE) | body`.
 *
 * `id`, `symbol` and `timestamp` live in the key and `provider` and
 * `providerPublicKey` in the store's configuration, so the value keeps only
 * the rest. `value` sits in a fixed slot so it comes back bit for bit (msgpack
 * would turn -0 into 0). The body is the array
 * `[signature, permawebTx, version, source, extras | null]`, packed with
 * msgpack, or written as JSON for the rare record msgpackr cannot return
 * unchanged: a `__proto__` key (msgpackr renames it), a lone surrogate (UTF-8
 * cannot hold it) or a nested -0 (msgpack writes it as the integer 0; the
 * JSON writer here keeps it, and `JSON.parse` reads it back).
 */
export const VALUE_FORMAT = 1

const BODY_MSGPACK = 0
const BODY_JSON = 1
const HEADER_BYTES = 10

// One Packr with its options pinned: plain maps (no shared structures to persist) and float64 numbers.
const packr = new Packr({ useRecords: false, mapsAsObjects: true, useFloat32: 0, moreTypes: false })

/** Packs the stored part of a validated record. */
export function encodeValue(record: StoredRecord): Buffer {
  const body = [record.signature, record.permawebTx, record.version, record.source, record.extras]
  const asJson = needsJsonBody(body)
  const bodyBytes = asJson ? Buffer.from(toExactJson(body), 'utf8') : packr.pack(body)
  const out = Buffer.allocUnsafe(HEADER_BYTES + bodyBytes.length)
  out[0] = VALUE_FORMAT
  out[1] = asJson ? BODY_JSON : BODY_MSGPACK
  out.writeDoubleLE(record.value, 2)
  bodyBytes.copy(out, HEADER_BYTES)
  return out
}

/**
 * Rebuilds a full record from its key parts and stored value; with
 * `minutes`, the range form's record, `minutes` last.
 * @throws PriceStoreError `PRICE_UNSUPPORTED_FORMAT` or `PRICE_CORRUPT_VALUE`, naming the key
 */
export function decodeValue(
  key: Uint8Array,
  value: Uint8Array,
  parts: { symbol: string; timestamp: number; id: string },
  provider: Provider,
  minutes?: number,
): PriceRecord {
  if (value.length < HEADER_BYTES) throw corrupt(key, 'is shorter than its header')
  if (value[0] !== VALUE_FORMAT) {
    throw new PriceStoreError(
      'PRICE_UNSUPPORTED_FORMAT',
      `value at key ${describeKey(key)} has format version ${value[0]}; this release reads version ${VALUE_FORMAT}`,
      { details: { key: describeKey(key) } },
    )
  }
  const bytes = Buffer.isBuffer(value) ? value : Buffer.from(value.buffer, value.byteOffset, value.byteLength)
  let body: unknown
  try {
    if (value[1] === BODY_MSGPACK) body = unpackBody(bytes)
    else if (value[1] === BODY_JSON) body = JSON.parse(bytes.toString('utf8', HEADER_BYTES))
    else throw new Error(`unknown body kind ${value[1]}`)
  } catch (cause) {
    throw corrupt(key, 'cannot be decoded', cause)
  }
  if (!isRecordBody(body)) throw corrupt(key, 'does not hold a record body')
  const [signature, permawebTx, version, source, extras] = body

  const record: Record<string, unknown> = {
    id: parts.id,
    symbol: parts.symbol,
    provider: provider.id,
    value: bytes.readDoubleLE(2),
    signature,
    permawebTx,
    version,
    source,
    timestamp: parts.timestamp,
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

// msgpackr allocates a DataView for every new source buffer and hangs it on the buffer; unpacking
// from one reused buffer skips that per record (msgpackr's own advice for database reads). It
// returns strings and objects, never views of its source, so reusing the bytes is safe.
let scratch = Buffer.allocUnsafeSlow(4096)

function unpackBody(value: Buffer): unknown {
  const length = value.length - HEADER_BYTES
  if (length > scratch.length) scratch = Buffer.allocUnsafeSlow(Math.max(length, scratch.length * 2))
  value.copy(scratch, 0, HEADER_BYTES)
  return packr.unpack(scratch, { start: 0, end: length })
}

function corrupt(key: Uint8Array, problem: string, cause?: unknown): PriceStoreError {
  return new PriceStoreError('PRICE_CORRUPT_VALUE', `value at key ${describeKey(key)} ${problem}`, {
    cause,
    details: { key: describeKey(key) },
  })
}

type RecordBody = [string, string, string, Record<string, unknown>, Record<string, unknown> | null]

function isRecordBody(body: unknown): body is RecordBody {
  if (!Array.isArray(body) || body.length !== 5) return false
  const [signature, permawebTx, version, source, extras] = body as unknown[]
  return typeof signature === 'string' && typeof permawebTx === 'string' && typeof version === 'string' &&
    isObject(source) && (extras === null || isObject(extras))
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
