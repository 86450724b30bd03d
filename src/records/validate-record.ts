import { PriceStoreError, describeValue } from '../errors.js'
import { idProblem, symbolProblem } from '../rules/text-rules.js'
import type { Provider } from '../types.js'
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
  const fail = (field: string, rule: string): never => {
    throw invalid(index, field, `record ${index}: ${field} ${rule} (got ${describeValue(record[field])})`)
  }

  const idIssue = idProblem(record.id)
  if (idIssue !== undefined) fail('id', idIssue)
  const symbolIssue = symbolProblem(record.symbol)
  if (symbolIssue !== undefined) fail('symbol', symbolIssue)
  if (record.provider !== provider.id) fail('provider', `must be this store's provider id ${JSON.stringify(provider.id)}`)
  if (typeof record.value !== 'number' || !Number.isFinite(record.value)) fail('value', 'must be a finite number')
  if (typeof record.signature !== 'string' || record.signature.length === 0) fail('signature', 'must be a non-empty string')
  if (typeof record.permawebTx !== 'string') fail('permawebTx', 'must be a string')
  if (typeof record.version !== 'string') fail('version', 'must be a string')
  if (!isPlainObject(record.source)) fail('source', 'must be a JSON object')
  if (!isJsonValue(record.source)) fail('source', 'must hold only JSON values (null, booleans, finite numbers, strings, arrays, objects)')
  if (!Number.isSafeInteger(record.timestamp) || (record.timestamp as number) < 0) {
    fail('timestamp', 'must be a safe integer >= 0 (milliseconds since the Unix epoch)')
  }
  if (record.providerPublicKey !== undefined && record.providerPublicKey !== provider.publicKey) {
    fail('providerPublicKey', "must be absent or equal this store's provider public key")
  }

  let extras: Record<string, unknown> | null = null
  for (const field of Object.keys(record)) {
    if (KNOWN_FIELDS.has(field)) continue
    const value = record[field]
    if (!isJsonValue(value)) fail(field, 'must be a JSON value (null, boolean, finite number, string, array, object)')
    extras ??= {}
    Object.defineProperty(extras, field, { value, enumerable: true, writable: true, configurable: true })
  }

  return {
    id: record.id as string,
    symbol: record.symbol as string,
    timestamp: record.timestamp as number,
    value: record.value as number,
    signature: record.signature as string,
    permawebTx: record.permawebTx as string,
    version: record.version as string,
    source: record.source as Record<string, unknown>,
    extras,
  }
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

function isJsonValue(value: unknown, depth = 0): boolean {
  // The depth cap keeps a hostile, deeply nested record from overflowing the stack.
  if (depth > 64) return false
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return true
    case 'number':
      return Number.isFinite(value)
    case 'object':
      if (value === null) return true
      if (Array.isArray(value)) return value.every((item) => isJsonValue(item, depth + 1))
      return isPlainObject(value) && Object.values(value).every((item) => isJsonValue(item, depth + 1))
    default:
      return false
  }
}
