/**
 * Log entries: the records of one batch that fall in one period, written in
 * the batch's atomic write and replayed into memory when the store opens,
 * until sealing moves them into chunks and deletes the entry.
 *
 * `version (1 byte) | (symbol | timestamp (u64 BE) | id | value)*`, where
 * symbol, id and value are each a varint length and their bytes (UTF-8 for
 * the strings).
 */
import { ByteReader, ByteWriter } from './bytes.js'
import { VALUE_VERSION, readFormatVersion } from './format-version.js'
import { writeValue } from './value-codec.js'
import type { StoredRecord } from '../records/stored-record.js'

/** One record as a log entry holds it. */
export interface LogRecord {
  readonly symbol: string
  readonly timestamp: number
  readonly id: string
  readonly value: Uint8Array
}

/**
 * Where the records of a log entry written by {@link LogEntryWriter} sit: record `i` is of symbol `symbols[i]`, and
 * `numbers[i * PLACE_FIELDS ..]` hold its timestamp, id start, id end, value start and value end. Flat arrays rather
 * than an object per record: a batch writes tens of thousands of records.
 */
export interface LogPlaces {
  readonly symbols: readonly string[]
  readonly numbers: readonly number[]
}

/** Numbers per record in {@link LogPlaces.numbers}. */
export const PLACE_FIELDS = 5

// One scratch writer for values: they are copied into the entry, so no buffer is allocated per record.
const scratch = new ByteWriter(4096)

/**
 * Builds one log entry record by record, encoding each value straight into
 * it, and remembers where each record's id and value sit so rows can be
 * views into the entry without parsing it again.
 */
export class LogEntryWriter {
  readonly #writer: ByteWriter
  readonly #symbols: string[] = []
  readonly #numbers: number[] = []

  /**
   * @param capacity bytes to start with (it doubles as it fills): small by default, as a batch touching hundreds of
   *   hours writes one entry each, mostly of a few records
   */
  constructor(capacity = 4096) {
    this.#writer = new ByteWriter(capacity).byte(VALUE_VERSION)
  }

  /** Appends a record: a validated record's value is encoded here, stored value bytes are copied as they are. */
  add(symbol: string, timestamp: number, id: string, value: StoredRecord | Uint8Array): void {
    const writer = this.#writer.text(symbol).uint64(timestamp)
    const idLength = Buffer.byteLength(id, 'utf8')
    writer.text(id)
    const idEnd = writer.length
    const bytes = value instanceof Uint8Array ? value : writeValue(scratch.reset(), value).view()
    writer.sized(bytes)
    this.#symbols.push(symbol)
    this.#numbers.push(timestamp, idEnd - idLength, idEnd, writer.length - bytes.length, writer.length)
  }

  /**
   * Appends record `index` of a finished entry as it is framed there (symbol, timestamp, id and value bytes, one
   * copy): a record encoded once can go into an entry of another shape.
   */
  addFrom(entry: FinishedLogEntry, index: number): void {
    const { bytes, places: { symbols, numbers } } = entry
    const at = index * PLACE_FIELDS
    const start = frameStart(numbers, index)
    const shift = this.#writer.length - start
    this.#writer.bytes(bytes.subarray(start, numbers[at + 4] as number))
    this.#symbols.push(symbols[index] as string)
    this.#numbers.push(numbers[at] as number, (numbers[at + 1] as number) + shift, (numbers[at + 2] as number) + shift,
      (numbers[at + 3] as number) + shift, (numbers[at + 4] as number) + shift)
  }

  /** The entry's bytes and where each record sits in them. */
  finish(): FinishedLogEntry {
    return this.#finished(this.#writer.finish())
  }

  /**
   * {@link LogEntryWriter.finish} for a writer that is not used again: its memory is the entry's when the capacity
   * it was given was close to the bytes written (ByteWriter.take), saving a copy.
   */
  take(): FinishedLogEntry {
    return this.#finished(this.#writer.take())
  }

  /** {@link LogEntryWriter.finish}, the bytes in a SharedArrayBuffer: another thread reads them without a copy. */
  finishShared(): FinishedLogEntry {
    const view = this.#writer.view()
    const bytes = Buffer.from(new SharedArrayBuffer(view.length))
    view.copy(bytes)
    return this.#finished(bytes)
  }

  #finished(bytes: Buffer): FinishedLogEntry {
    return { bytes, places: { symbols: this.#symbols, numbers: this.#numbers } }
  }
}

/** Where record `index`'s frame starts: where the one before it ends, the first one's after the version byte. */
export function frameStart(numbers: LogPlaces['numbers'], index: number): number {
  return index === 0 ? 1 : (numbers[index * PLACE_FIELDS - 1] as number)
}

/** A log entry's bytes and where each record sits in them. */
export interface FinishedLogEntry {
  readonly bytes: Buffer
  readonly places: LogPlaces
}

/** Packs the records of one batch in one period. */
export function encodeLogEntry(records: readonly LogRecord[]): Buffer {
  const entry = new LogEntryWriter()
  for (const record of records) entry.add(record.symbol, record.timestamp, record.id, record.value)
  return entry.finish().bytes
}

/**
 * Visits each record of a log entry with views into `bytes`: the id at
 * `idStart..idEnd` and the value at `valueStart..valueEnd`.
 * @throws MalformedBytes when the entry does not parse
 */
export function readLogEntry(
  bytes: Buffer,
  visit: (symbol: string, timestamp: number, idStart: number, idEnd: number, valueStart: number, valueEnd: number) => void,
): void {
  const reader = new ByteReader(bytes)
  readFormatVersion(reader)
  while (!reader.done) {
    const symbol = reader.text()
    const timestamp = reader.uint64()
    const idStart = reader.sized()
    const idEnd = reader.offset
    const valueStart = reader.sized()
    visit(symbol, timestamp, idStart, idEnd, valueStart, reader.offset)
  }
}
