import { isPriceStoreError } from '../index.js'
import { CliError } from './args.js'
import { type Progress, formatCount } from './progress.js'
import { InputSyntaxError } from './record-reader.js'

/** Where a record came from. */
export interface Position {
  readonly file: string
  readonly line: number
}

/** Where batches go: `PriceStore` fits. */
export interface BatchTarget {
  putMany(records: Iterable<unknown>): Promise<number>
}

/** Collects records into batches, writes each batch atomically, and explains failures by file and line. */
export class BatchWriter {
  readonly #store: BatchTarget
  readonly #batchSize: number
  readonly #progress: Progress
  #records: unknown[] = []
  #positions: Position[] = []

  constructor(store: BatchTarget, batchSize: number, progress: Progress) {
    this.#store = store
    this.#batchSize = batchSize
    this.#progress = progress
  }

  /** Adds a record; writes the batch once it is full. */
  async add(record: unknown, position: Position): Promise<void> {
    this.#records.push(record)
    this.#positions.push(position)
    if (this.#records.length >= this.#batchSize) await this.flush()
  }

  /** Writes the records collected so far, if any. */
  async flush(): Promise<void> {
    if (this.#records.length === 0) return
    this.#progress.add(await this.#store.putMany(this.#records))
    this.#records = []
    this.#positions = []
  }

  /** The error to report for `err`, thrown while reading or writing the current batch. */
  failure(err: unknown): unknown {
    this.#progress.finish()
    if (err instanceof InputSyntaxError) return new CliError(`${err.message}\n${this.#stopped()}`, 2, { cause: err })
    if (isPriceStoreError(err, 'PRICE_INVALID_RECORD')) {
      const { index, field } = err.details
      const at = index === undefined ? undefined : this.#positions[index]
      const where = at === undefined ? 'bad record' : `${at.file}:${at.line}: bad record`
      const what = field === undefined ? '' : ` (field "${field}")`
      // The library counts records within the batch; the file line says more here.
      const reason = err.message.replace(/^record \d+:? ?/, '')
      return new CliError(`${where}${what}: ${reason}\n${this.#stopped()}`, 2, { cause: err })
    }
    return err
  }

  #stopped(): string {
    const written = `import stopped: ${formatCount(this.#progress.count)} records were written before this batch`
    const first = this.#positions[0]
    const last = this.#positions[this.#positions.length - 1]
    if (first === undefined || last === undefined) return `${written}.`
    const span = first.file === last.file ? `${first.file} lines ${first.line}-${last.line}` : `${first.file}:${first.line} to ${last.file}:${last.line}`
    return `${written}; this batch (${formatCount(this.#positions.length)} records, ${span}) was not written.`
  }
}
