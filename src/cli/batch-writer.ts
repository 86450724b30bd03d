import { isPriceStoreError, isRecordRefusal } from '../errors.js'
import type { PriceStoreError } from '../errors.js'
import type { NewPriceRecord, Provider } from '../types.js'
import { validateRecord } from '../records/validate-record.js'
import { CliError } from './args.js'
import { type Progress, countOf } from './progress.js'
import { InputSyntaxError } from './record-reader.js'

/** Where a record came from. */
export interface Position {
  readonly file: string
  readonly line: number
  /** The record's text as read, kept for `--errors-file` only. */
  readonly text?: string | undefined
}

/** A record left out with `--skip-bad`, as `--errors-file` writes it (one JSON line each). */
export interface SkippedRecord {
  readonly file: string
  readonly line: number
  /** `INVALID_JSON`, or the library's code (`PRICE_INVALID_RECORD`, or what the server answered). */
  readonly code: string
  /** The record field at fault, when one is. */
  readonly field?: string
  readonly message: string
  /** The record's text as read, when known. */
  readonly raw?: string
}

/** What a {@link BatchWriter} does besides batching. */
export interface BatchWriterOptions {
  /** Leave bad records out (each reported) instead of stopping at the first. */
  readonly skipBad?: boolean
  /** Told of each record left out, in the order of the input (`--errors-file`). */
  readonly onSkip?: (skipped: SkippedRecord) => void
}

/**
 * Where batches go: `PriceStore` fits, and so does a running server
 * (`import --url`). Without a `provider` to check records against,
 * `skipBad` leaves the checks to `putMany` and drops the bad record it names.
 */
export interface BatchTarget {
  readonly provider?: Provider
  putMany(records: Iterable<NewPriceRecord>): Promise<number>
}

/** What an import did, for its summary. */
export interface ImportCounts {
  /** Records now in the store from this import: a record repeated within one batch counts once. */
  readonly stored: number
  /** Records read (bad ones included), excluding blank lines. */
  readonly read: number
  /** Bad records skipped with `--skip-bad`. */
  readonly skipped: number
  /** Records that repeated one of the same batch (same symbol, timestamp and id): written once. */
  readonly repeated: number
}

/**
 * Collects records into batches, writes each batch atomically, and explains
 * failures by file and line. With `skipBad`, each record is checked as it
 * comes, and a bad one is reported on its own line and left out, so its
 * batch holds only good records.
 */
export class BatchWriter {
  readonly #store: BatchTarget
  readonly #batchSize: number
  readonly #progress: Progress
  readonly #skipBad: boolean
  readonly #onSkip: ((skipped: SkippedRecord) => void) | undefined
  #records: unknown[] = []
  #positions: Position[] = []
  #read = 0
  #skipped = 0
  #repeated = 0
  #lastWritten: Position | undefined

  constructor(store: BatchTarget, batchSize: number, progress: Progress, { skipBad = false, onSkip }: BatchWriterOptions = {}) {
    this.#store = store
    this.#batchSize = batchSize
    this.#progress = progress
    this.#skipBad = skipBad
    this.#onSkip = onSkip
  }

  /** The counts so far. */
  get counts(): ImportCounts {
    return { stored: this.#progress.count, read: this.#read, skipped: this.#skipped, repeated: this.#repeated }
  }

  /** Where the last record written came from (`undefined` before the first batch). */
  get lastWritten(): Position | undefined {
    return this.#lastWritten
  }

  /** The records read but not written yet, with where the first and last came from. */
  get pending(): { readonly count: number; readonly first: Position | undefined; readonly last: Position | undefined } {
    return { count: this.#positions.length, first: this.#positions[0], last: this.#positions.at(-1) }
  }

  /** Adds a record; writes the batch once it is full. */
  async add(record: unknown, position: Position): Promise<void> {
    this.#read++
    if (this.#skipBad) {
      // Checked as it comes, so bad records are reported in line order with the lines that are not JSON.
      const refusal = refusalOf(record, this.#store.provider)
      if (refusal !== undefined) {
        this.#skipRecord(refusal, position)
        return
      }
    }
    this.#records.push(record)
    this.#positions.push(position)
    if (this.#records.length >= this.#batchSize) await this.flush()
  }

  /** Reports a record that is not JSON (with `--skip-bad`, which reads on past it). */
  skipSyntaxError(err: InputSyntaxError): void {
    this.#read++
    this.#skip(err.message, { file: err.file, line: err.line, code: 'INVALID_JSON', message: err.message.slice(`${err.file}:${err.line}: `.length), ...(err.text === undefined ? {} : { raw: err.text }) })
  }

  /** Writes the records collected so far, if any. */
  async flush(): Promise<void> {
    if (this.#records.length === 0) return
    await this.#put()
    if (this.#records.length === 0) return
    // The store keeps one record per (symbol, timestamp, id): count what it holds, not what was read.
    const distinct = countDistinct(this.#records)
    this.#repeated += this.#records.length - distinct
    this.#progress.add(distinct)
    this.#lastWritten = this.#positions.at(-1)
    this.#records = []
    this.#positions = []
  }

  /** Writes the batch; with `skipBad` (checked by the target), drops each bad record the target names and writes the rest. */
  async #put(): Promise<void> {
    for (;;) {
      try {
        // Parsed JSON of any shape: putMany checks each record at run time and names the bad one.
        await this.#store.putMany(this.#records as NewPriceRecord[])
        return
      } catch (err) {
        const index = isRecordRefusal(err) ? err.details.index : undefined
        if (!this.#skipBad || index === undefined || index >= this.#records.length) throw err
        this.#skipRecord(err as PriceStoreError, this.#positions[index])
        this.#records.splice(index, 1)
        this.#positions.splice(index, 1)
        if (this.#records.length === 0) return
      }
    }
  }

  /** The error to report for `err`, thrown while reading or writing the current batch. */
  failure(err: unknown): unknown {
    this.#progress.finish()
    if (err instanceof InputSyntaxError) {
      // A bad record read before the line that is not JSON comes first: problems are reported in line order.
      const earlier = this.#records.findIndex((record) => refusalOf(record, this.#store.provider) !== undefined)
      if (earlier >= 0) {
        const refusal = refusalOf(this.#records[earlier], this.#store.provider) as PriceStoreError
        return new CliError(`${badRecord(refusal, this.#positions[earlier])}\n${this.#stopped(true)}`, 2, { cause: refusal })
      }
      // A broken array's next element cannot be found: only a line or element with known text can be skipped.
      return new CliError(`${err.message}\n${this.#stopped(err.text !== undefined)}`, 2, { cause: err })
    }
    if (isRecordRefusal(err)) {
      const { index } = err.details
      return new CliError(`${badRecord(err, index === undefined ? undefined : this.#positions[index])}\n${this.#stopped(true)}`, 2, { cause: err })
    }
    return err
  }

  #skip(message: string, skipped: SkippedRecord): void {
    this.#skipped++
    this.#progress.note(`price-store import: skipped ${message}`)
    this.#onSkip?.(skipped)
  }

  #skipRecord(err: PriceStoreError, at: Position | undefined): void {
    const { field } = err.details
    this.#skip(badRecord(err, at), {
      file: at?.file ?? '', line: at?.line ?? 0, code: err.code, ...(field === undefined ? {} : { field }),
      message: err.message.replace(/^record \d+:? ?/, ''), ...(at?.text === undefined ? {} : { raw: at.text }),
    })
  }

  /** What the import wrote before it stopped, and (when the problem can be skipped) the way past it. */
  #stopped(skippable: boolean): string {
    const done = this.#progress.count
    const written = `import stopped: ${countOf(done, 'record')} ${done === 1 ? 'was' : 'were'} written before this batch`
    const { count, first, last } = this.pending
    const stopped = first === undefined || last === undefined ? `${written}.` : `${written}; this batch (${countOf(count, 'record')}, ${describeSpan(first, last)}) was not written.`
    return skippable ? `${stopped} Fix the record and run the same import again (records written are replaced), or add --skip-bad to write the good records and report each bad one.` : stopped
  }
}

/** `a.ndjson lines 4-7`, or `a.ndjson:9 to b.ndjson:3` across files. */
export function describeSpan(first: Position, last: Position): string {
  return first.file === last.file ? `${first.file} lines ${first.line}-${last.line}` : `${first.file}:${first.line} to ${last.file}:${last.line}`
}

/** `FILE:LINE: bad record (field "value"): value must be a finite number (got "abc")`. */
function badRecord(err: PriceStoreError, at: Position | undefined): string {
  const where = at === undefined ? 'bad record' : `${at.file}:${at.line}: bad record`
  const { field } = err.details
  const what = field === undefined ? '' : ` (field "${field}")`
  // The library counts records within the batch; the file line says more here.
  return `${where}${what}: ${err.message.replace(/^record \d+:? ?/, '')}`
}

/**
 * Why the target would refuse `record`, or `undefined`. Without the target's provider (`import --url`: the
 * server knows it) every rule but the provider's is checked; the server names a wrong provider when the batch
 * is sent.
 */
function refusalOf(record: unknown, provider: Provider | undefined): PriceStoreError | undefined {
  const own = record as { provider?: unknown; providerPublicKey?: unknown } | null
  const assumed = provider ?? { name: '', id: own?.provider as string, publicKey: own?.providerPublicKey as string }
  try {
    validateRecord(record, 0, assumed)
    return undefined
  } catch (err) {
    if (!isPriceStoreError(err, 'PRICE_INVALID_RECORD')) throw err
    return err
  }
}

/** Records of a written (so valid) batch counted once per (symbol, timestamp, id). */
function countDistinct(records: readonly unknown[]): number {
  const keys = new Set<string>()
  for (const record of records) {
    const { symbol, timestamp, id } = record as { symbol: string; timestamp: number; id: string }
    keys.add(`${symbol}\u0000${timestamp}\u0000${id}`)
  }
  return keys.size
}
