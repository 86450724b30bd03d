/**
 * A batch's records encoded once, in chunks, for a batch whose signatures
 * are verified: each chunk is a log entry (log-codec.ts) of a run of the
 * batch's records in their order, in shared memory, which the signature
 * workers decode in place (store/signatures/ingest-worker.ts); the batch's
 * log entries, one per hour, are then put together by copying each record's
 * frame out of its chunk. So no record is turned into JSON or cloned on the
 * writing thread to be verified, and what is verified is the bytes that
 * are written.
 */
import { periodOf } from './key-layout.js'
import { LogEntryWriter, PLACE_FIELDS, frameStart, type FinishedLogEntry } from './log-codec.js'
import type { StoredRecord } from '../records/stored-record.js'

/** The records of one batch, framed a chunk at a time, then as log entries by hour. */
export class FramedRecords {
  readonly #records: readonly StoredRecord[]
  readonly #chunks: FinishedLogEntry[] = []
  /** Records framed into chunks so far: the chunks hold records 0 to this, in order. */
  #framed = 0
  /** Bytes of the frames of those records. */
  #bytes = 0

  constructor(records: readonly StoredRecord[]) {
    this.#records = records
  }

  /**
   * The next records, up to record `to` (exclusive), framed as one log entry in a SharedArrayBuffer.
   * @throws RangeError when `to` is not past the records framed so far or past the batch's end
   */
  share(to: number): Buffer {
    const from = this.#framed
    if (!(Number.isInteger(to) && to > from && to <= this.#records.length)) throw new RangeError(`cannot frame records ${from} to ${to} of ${this.#records.length}`)
    // Sized by the records framed so far, so the writer rarely grows (a copy each time it does).
    const writer = new LogEntryWriter(from === 0 ? undefined : Math.ceil((this.#bytes / from) * (to - from) * 1.25) + 64)
    for (let i = from; i < to; i++) add(writer, this.#records[i] as StoredRecord)
    const chunk = writer.finishShared()
    this.#chunks.push(chunk)
    this.#framed = to
    this.#bytes += chunk.bytes.length - 1
    return chunk.bytes
  }

  /** The batch's log entries, one per hour its records fall in, records in batch order within each. */
  entries(): Map<number, FinishedLogEntry> {
    const writers = new Map<number, LogEntryWriter>()
    const records = this.#records
    if (this.#framed < records.length) {
      // Not verified (or its verification stopped part way): every record encoded in place.
      for (const record of records) {
        const period = periodOf(record.timestamp)
        let writer = writers.get(period)
        if (writer === undefined) writers.set(period, (writer = new LogEntryWriter()))
        add(writer, record)
      }
      return new Map([...writers].map(([period, writer]) => [period, writer.finish()]))
    }
    // Framed: each record's frame copied into its hour's entry, every entry sized first to hold exactly its frames.
    const sizes = new Map<number, number>()
    this.#eachFrame((record, chunk, index) => {
      const period = periodOf(record.timestamp)
      sizes.set(period, (sizes.get(period) ?? 1) + frameLength(chunk, index))
    })
    for (const [period, size] of sizes) writers.set(period, new LogEntryWriter(size))
    this.#eachFrame((record, chunk, index) => (writers.get(periodOf(record.timestamp)) as LogEntryWriter).addFrom(chunk, index))
    return new Map([...writers].map(([period, writer]) => [period, writer.take()]))
  }

  /** Visits each record with its chunk and its index there, in batch order. */
  #eachFrame(visit: (record: StoredRecord, chunk: FinishedLogEntry, index: number) => void): void {
    let at = 0
    for (const chunk of this.#chunks) {
      for (let index = 0; index < chunk.places.symbols.length; index++) visit(this.#records[at++] as StoredRecord, chunk, index)
    }
  }
}

/** Bytes of record `index`'s frame in `chunk`: from the end of the frame before it (or the version byte) to its value's end. */
function frameLength({ places: { numbers } }: FinishedLogEntry, index: number): number {
  return (numbers[index * PLACE_FIELDS + 4] as number) - frameStart(numbers, index)
}

function add(writer: LogEntryWriter, record: StoredRecord): void {
  writer.add(record.symbol, record.timestamp, record.id, record)
}
