import type { ScanRow } from '../../engine/scan-source.js'
import { minuteOfHour, withMinutes } from '../../engine/kernels/sample.js'
import { decodeValue, peekValue, valueJson } from '../../keys/value-codec.js'
import { recordJson } from '../../engine/answer-json.js'
import type { PriceRecord, Provider, RecordRef, SampledRecord } from '../../types.js'

/** Reads a row's id from stored bytes on first use. */
export type IdReader = (bytes: Buffer, start: number, end: number) => string

const UTF8_ID: IdReader = (bytes, start, end) => bytes.toString('utf8', start, end)

/**
 * One stored record as raw bytes: the timestamp is known at once; the id is
 * read and the record decoded on first use, then kept (frozen), so a row
 * held by a cache decodes at most once per form. Rows never copy their
 * bytes: they are views of a log entry, a chunk part or a heads entry.
 */
export class Row implements ScanRow {
  readonly symbol: string
  readonly timestamp: number
  readonly #bytes: Buffer
  readonly #idStart: number
  readonly #idEnd: number
  readonly #readId: IdReader
  readonly #valueStart: number
  readonly #valueEnd: number
  readonly #entry: string | (() => string)
  readonly #provider: Provider
  #id: string | undefined
  #record: PriceRecord | undefined
  #sampled: SampledRecord | undefined

  /**
   * @param bytes holds the id at `idStart..idEnd` (read with `readId`) and the value at `valueStart..valueEnd`
   * @param entry names the stored entry holding the value, for error messages (computed on demand when a function)
   */
  constructor(
    symbol: string, timestamp: number, bytes: Buffer, idStart: number, idEnd: number, valueStart: number, valueEnd: number,
    entry: string | (() => string), provider: Provider, readId: IdReader = UTF8_ID,
  ) {
    this.symbol = symbol
    this.timestamp = timestamp
    this.#bytes = bytes
    this.#idStart = idStart
    this.#idEnd = idEnd
    this.#readId = readId
    this.#valueStart = valueStart
    this.#valueEnd = valueEnd
    this.#entry = entry
    this.#provider = provider
  }

  get id(): string {
    this.#id ??= this.#readId(this.#bytes, this.#idStart, this.#idEnd)
    return this.#id
  }

  /** The id's stored bytes, for writers that copy a row into a new entry. */
  get idBytes(): Buffer {
    return this.#bytes.subarray(this.#idStart, this.#idEnd)
  }

  /** Whether the stored id bytes are UTF-8 (as in the log and heads) rather than a compact form. */
  get idIsUtf8(): boolean {
    return this.#readId === UTF8_ID
  }

  /** The stored value's length in bytes. */
  get valueLength(): number {
    return this.#valueEnd - this.#valueStart
  }

  /** The stored value bytes (a view). */
  get value(): Buffer {
    return this.#bytes.subarray(this.#valueStart, this.#valueEnd)
  }

  record(): PriceRecord {
    this.#record ??= this.#decode(undefined)
    return this.#record
  }

  /**
   * The record, without keeping it on the row: for readers (watchers) whose
   * rows are shared with the open area, which must not grow by every record
   * decoded through it.
   */
  decode(): PriceRecord {
    return this.#record ?? this.#decode(undefined)
  }

  /** The range form's record, decoded straight into its shape unless the plain record is at hand. */
  sampled(): SampledRecord {
    this.#sampled ??= (this.#record === undefined ? this.#decode(minuteOfHour(this.timestamp)) : withMinutes(this.#record)) as SampledRecord
    return this.#sampled
  }

  /**
   * The record's JSON text as the answers write it (with `minutes` for the
   * range form), straight from the stored bytes when the record is not
   * decoded yet: no record object is made, so a large answer serialised
   * this way costs far less CPU and garbage.
   */
  json(withMinutes: boolean): string {
    const decoded = withMinutes ? this.#sampled : this.#record
    if (decoded !== undefined) return recordJson(decoded)
    const provider = this.#provider
    const prefix = `{"id":${JSON.stringify(this.id)},"symbol":${JSON.stringify(this.symbol)},"provider":${JSON.stringify(provider.id)}`
    const minutes = withMinutes ? `,"minutes":${minuteOfHour(this.timestamp)}` : ''
    const suffix = `,"timestamp":${this.timestamp},"providerPublicKey":${JSON.stringify(provider.publicKey)}${minutes}}`
    return valueJson(this.#bytes, this.#valueStart, this.#valueEnd, prefix, suffix) ?? recordJson(withMinutes ? this.sampled() : this.record())
  }

  /**
   * The id, timestamp and value, read from the value's fixed slot without
   * decoding the body. A damaged header is decoded in full, which fails
   * with the store's own corruption error.
   */
  ref(): RecordRef {
    const value = this.#record?.value ?? peekValue(this.#bytes, this.#valueStart, this.#valueEnd)
    return { id: this.id, timestamp: this.timestamp, value: value ?? this.record().value }
  }

  #decode(minutes: number | undefined): PriceRecord {
    const place = { symbol: this.symbol, timestamp: this.timestamp, id: this.id, entry: this.#entry }
    return freezeRecord(decodeValue(this.#bytes, this.#valueStart, this.#valueEnd, place, this.#provider, minutes))
  }
}

/**
 * Records may be shared between answers (the caches), so nobody may change
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
