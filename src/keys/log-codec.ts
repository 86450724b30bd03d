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

/** One record as a log entry holds it. */
export interface LogRecord {
  readonly symbol: string
  readonly timestamp: number
  readonly id: string
  readonly value: Uint8Array
}

/** One record's place in a log entry written by {@link LogEntryWriter}. */
export interface LogPlace {
  readonly symbol: string
  readonly timestamp: number
  readonly idStart: number
  readonly idEnd: number
  readonly valueStart: number
  readonly valueEnd: number
}

// One scratch writer for values: they are copied into the entry, so no buffer is allocated per record.
const scratch = new ByteWriter(4096)

/**
 * Builds one log entry record by record, encoding each value straight into
 * it, and remembers where each record's id and value sit so rows can be
 * views into the entry without parsing it again.
 */
export class LogEntryWriter {
  // Small at first (it doubles as it fills): a batch touching hundreds of hours writes one entry each, mostly of a few records.
  readonly #writer = new ByteWriter(4096).byte(VALUE_VERSION)
  readonly #places: { symbol: string; timestamp: number; idStart: number; idEnd: number; valueStart: number; valueEnd: number }[] = []

  /** Appends a record; `writeValue` writes its value into the writer it is given. */
  add(symbol: string, timestamp: number, id: string, writeValue: (writer: ByteWriter) => void): void {
    const writer = this.#writer.text(symbol).uint64(timestamp)
    const idLength = Buffer.byteLength(id, 'utf8')
    writer.text(id)
    const idEnd = writer.length
    writeValue(scratch.reset())
    const value = scratch.view()
    writer.sized(value)
    this.#places.push({ symbol, timestamp, idStart: idEnd - idLength, idEnd, valueStart: writer.length - value.length, valueEnd: writer.length })
  }

  /** The entry's bytes and where each record sits in them. */
  finish(): { readonly bytes: Buffer; readonly places: readonly LogPlace[] } {
    return { bytes: this.#writer.finish(), places: this.#places }
  }
}

/** Packs the records of one batch in one period. */
export function encodeLogEntry(records: readonly LogRecord[]): Buffer {
  const entry = new LogEntryWriter()
  for (const record of records) entry.add(record.symbol, record.timestamp, record.id, (writer) => writer.bytes(record.value))
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
