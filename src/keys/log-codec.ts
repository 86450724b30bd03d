/**
 * Log entries: the records of one batch that fall in one period, written in
 * the batch's atomic write and replayed into memory when the store opens,
 * until sealing moves them into chunks and deletes the entry.
 *
 * `version (1 byte) | (symbol | timestamp (u64 BE) | id | value)*`, where
 * symbol, id and value are each a varint length and their bytes (UTF-8 for
 * the strings).
 */
import { ByteReader, ByteWriter, MalformedBytes } from './bytes.js'
import { STORE_FORMAT } from './value-codec.js'

/** One record as a log entry holds it. */
export interface LogRecord {
  readonly symbol: string
  readonly timestamp: number
  readonly id: string
  readonly value: Uint8Array
}

/** Packs the records of one batch in one period. */
export function encodeLogEntry(records: readonly LogRecord[]): Buffer {
  const writer = new ByteWriter(records.reduce((sum, record) => sum + record.value.length + 64, 1))
  writer.byte(STORE_FORMAT)
  for (const record of records) writer.text(record.symbol).uint64(record.timestamp).text(record.id).sized(record.value)
  return writer.finish()
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
  const version = reader.byte()
  if (version !== STORE_FORMAT) throw new MalformedBytes(`version ${version}, expected ${STORE_FORMAT}`)
  while (!reader.done) {
    const symbol = reader.text()
    const timestamp = reader.uint64()
    const idStart = reader.sized()
    const idEnd = reader.offset
    const valueStart = reader.sized()
    visit(symbol, timestamp, idStart, idEnd, valueStart, reader.offset)
  }
}
