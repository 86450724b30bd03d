import { PriceStoreError, describeValue } from '../errors.js'
import { idProblem, symbolProblem } from '../rules/text-rules.js'
import type { Provider } from '../types.js'
import { ABSENT_SIGNATURE, carriesEvmSignature } from './signature-presence.js'
import type { StoredRecord } from './stored-record.js'

/** Fields with a rule of their own; everything else on a record is an extra, kept as given. */
const KNOWN_FIELDS = new Set([
  'id', 'symbol', 'provider', 'value', 'signature', 'permawebTx', 'version', 'source', 'timestamp',
  'providerPublicKey', 'minutes',
])

/**
 * Checks one incoming record against SPEC §1 and returns what the store keeps.
 * @param index the record's position in its batch, named in the error
 * @throws PriceStoreError `PRICE_INVALID_RECORD`, with `details.index` and `details.field`
 */
export function validateRecord(input: unknown, index: number, provider: Provider): StoredRecord {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw invalid(index, undefined, `record ${index} must be an object (got ${describeValue(input)})`)
  }
  const record = input as Record<string, unknown>

  const idIssue = idProblem(record.id)
  if (idIssue !== undefined) failField(record, index, 'id', idIssue)
  const symbolIssue = symbolProblem(record.symbol)
  if (symbolIssue !== undefined) failField(record, index, 'symbol', symbolIssue)
  if (record.provider !== provider.id) failField(record, index, 'provider', `must be this store's provider id ${JSON.stringify(provider.id)}`)
  if (typeof record.value !== 'number' || !Number.isFinite(record.value)) failField(record, index, 'value', 'must be a finite number')
  const signature = signatureOf(record, index)
  if (typeof record.permawebTx !== 'string') failField(record, index, 'permawebTx', 'must be a string')
  if (typeof record.version !== 'string') failField(record, index, 'version', 'must be a string')
  if (!isPlainObject(record.source)) failField(record, index, 'source', 'must be a JSON object')
  let walk = jsonWalk(record.source, 0)
  if (walk === NOT_JSON) failField(record, index, 'source', 'must hold only JSON values (null, booleans, finite numbers, strings, arrays, objects)')
  if (!Number.isSafeInteger(record.timestamp) || (record.timestamp as number) < 0) {
    failField(record, index, 'timestamp', 'must be a safe integer >= 0 (milliseconds since the Unix epoch)')
  }
  if (record.providerPublicKey !== undefined && record.providerPublicKey !== provider.publicKey) {
    failField(record, index, 'providerPublicKey', "must be absent or equal this store's provider public key")
  }

  let extras: Record<string, unknown> | null = null
  // for-in over own keys: the same keys in the same order as Object.keys, without an array per record.
  for (const field in record) {
    if (!Object.hasOwn(record, field) || KNOWN_FIELDS.has(field)) continue
    const value = record[field]
    const kind = jsonWalk(value, 0)
    if (kind === NOT_JSON) failField(record, index, field, 'must be a JSON value (null, boolean, finite number, string, array, object)')
    if (kind === UNUSUAL_JSON || !isPlainKey(field)) walk = UNUSUAL_JSON
    extras ??= {}
    Object.defineProperty(extras, field, { value, enumerable: true, writable: true, configurable: true })
  }

  return {
    id: record.id as string,
    symbol: record.symbol as string,
    timestamp: record.timestamp as number,
    value: record.value as number,
    signature,
    permawebTx: record.permawebTx as string,
    version: record.version as string,
    source: record.source as Record<string, unknown>,
    extras,
    plainJson: walk === PLAIN_JSON && signature.isWellFormed() && (record.permawebTx as string).isWellFormed() &&
      (record.version as string).isWellFormed(),
  }
}

/**
 * The text the store keeps for the record's Arweave `signature`: the signature itself, or
 * {@link ABSENT_SIGNATURE} when the record carries none (absent, or empty: an empty signature signs nothing) but
 * carries an EVM one instead. A record must carry at least one signature kind.
 */
function signatureOf(record: Record<string, unknown>, index: number): string {
  const { signature } = record
  if (signature !== undefined && typeof signature !== 'string') failField(record, index, 'signature', 'must be a string when present')
  if (typeof signature === 'string' && signature !== ABSENT_SIGNATURE) return signature
  if (!carriesEvmSignature(record)) {
    failField(record, index, 'signature', `is ${signature === undefined ? 'missing' : 'empty'}, and the record carries no liteEvmSignature or evmSignature (0x and 130 hex digits) either: a record must carry at least one signature`)
  }
  return ABSENT_SIGNATURE
}

// A function of its own rather than a closure per record: validation runs for every record written.
function failField(record: Record<string, unknown>, index: number, field: string, rule: string): never {
  throw invalid(index, field, `record ${index}: ${field} ${rule} (got ${describeValue(record[field])})`)
}

function invalid(index: number, field: string | undefined, message: string): PriceStoreError {
  return new PriceStoreError('PRICE_INVALID_RECORD', message, {
    details: field === undefined ? { index } : { index, field },
  })
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false
  const proto = Object.getPrototypeOf(value)
  return proto === Object.prototype || proto === null
}

/** What {@link jsonWalk} found: not JSON, JSON that every encoder keeps exactly, or JSON with an unusual part. */
const NOT_JSON = 0
const PLAIN_JSON = 1
const UNUSUAL_JSON = 2
type JsonKind = typeof NOT_JSON | typeof PLAIN_JSON | typeof UNUSUAL_JSON

/**
 * Whether `value` is a JSON value and, in the same walk, whether it is plain (see `StoredRecord.plainJson`): no -0,
 * no lone surrogate in a string or key, no `__proto__` key. One walk serves both, since it runs for every record.
 */
function jsonWalk(value: unknown, depth: number): JsonKind {
  // The depth cap keeps a hostile, deeply nested record from overflowing the stack.
  if (depth > 64) return NOT_JSON
  switch (typeof value) {
    case 'string':
      return value.isWellFormed() ? PLAIN_JSON : UNUSUAL_JSON
    case 'boolean':
      return PLAIN_JSON
    case 'number':
      return !Number.isFinite(value) ? NOT_JSON : Object.is(value, -0) ? UNUSUAL_JSON : PLAIN_JSON
    case 'object': {
      if (value === null) return PLAIN_JSON
      let kind: JsonKind = PLAIN_JSON
      if (Array.isArray(value)) {
        for (const item of value) {
          const inner = jsonWalk(item, depth + 1)
          if (inner === NOT_JSON) return NOT_JSON
          if (inner === UNUSUAL_JSON) kind = UNUSUAL_JSON
        }
        return kind
      }
      if (!isPlainObject(value)) return NOT_JSON
      for (const key in value) {
        if (!Object.hasOwn(value, key)) continue
        const inner = jsonWalk(value[key], depth + 1)
        if (inner === NOT_JSON) return NOT_JSON
        if (inner === UNUSUAL_JSON || !isPlainKey(key)) kind = UNUSUAL_JSON
      }
      return kind
    }
    default:
      return NOT_JSON
  }
}

function isPlainKey(key: string): boolean {
  return key !== '__proto__' && key.isWellFormed()
}
