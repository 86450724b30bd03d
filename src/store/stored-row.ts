import type { ScanRow } from '../engine/scan-source.js'
import { readTimestamp } from '../keys/key-codec.js'
import { decodeValue } from '../keys/value-codec.js'
import { minuteOfHour, withMinutes } from '../engine/sample.js'
import type { PriceRecord, Provider, SampledRecord } from '../types.js'

/**
 * One stored record as raw key and value bytes. The timestamp is read from
 * the key; the record is decoded on first use and then kept, frozen, so a
 * row held by a cache (hot tails, bucket heads) decodes at most once per form.
 */
export class StoredRow implements ScanRow {
  readonly timestamp: number
  readonly key: Uint8Array
  readonly #value: Uint8Array
  readonly #symbol: string
  readonly #prefixLength: number
  readonly #provider: Provider
  #record: PriceRecord | undefined
  #sampled: SampledRecord | undefined

  constructor(key: Uint8Array, value: Uint8Array, symbol: string, prefixLength: number, provider: Provider) {
    this.timestamp = readTimestamp(key, prefixLength)
    this.key = key
    this.#value = value
    this.#symbol = symbol
    this.#prefixLength = prefixLength
    this.#provider = provider
  }

  record(): PriceRecord {
    this.#record ??= this.#decode(undefined)
    return this.#record
  }

  /**
   * The range form's record: decoded straight into its final shape unless
   * the plain record is already at hand. Kept too, for rows that caches hold.
   */
  sampled(): SampledRecord {
    this.#sampled ??= (this.#record === undefined ? this.#decode(minuteOfHour(this.timestamp)) : withMinutes(this.#record)) as SampledRecord
    return this.#sampled
  }

  #decode(minutes: number | undefined): PriceRecord {
    const idStart = this.#prefixLength + 8
    const id = Buffer.from(this.key.buffer, this.key.byteOffset + idStart, this.key.byteLength - idStart).toString('utf8')
    return freezeRecord(decodeValue(this.key, this.#value, { symbol: this.#symbol, timestamp: this.timestamp, id }, this.#provider, minutes))
  }
}

/** Compares rows by key bytes: (timestamp, id) order within one symbol. */
export function compareRows(a: StoredRow, b: StoredRow): number {
  return Buffer.compare(a.key, b.key)
}

/**
 * Records may be shared between answers (the hot tail), so nobody may change
 * one. The known fields are strings and numbers, so only `source` and the
 * extra fields can hold objects to freeze in turn.
 */
function freezeRecord(record: PriceRecord): PriceRecord {
  for (const field in record) {
    const value = record[field]
    if (typeof value === 'object' && value !== null) deepFreeze(value)
  }
  return Object.freeze(record)
}

function deepFreeze(value: object): void {
  Object.freeze(value)
  for (const field of Object.keys(value)) {
    const nested = (value as Record<string, unknown>)[field]
    if (typeof nested === 'object' && nested !== null) deepFreeze(nested)
  }
}
