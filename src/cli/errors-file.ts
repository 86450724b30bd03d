import { createWriteStream, type WriteStream } from 'node:fs'
import { once } from 'node:events'
import { CliError } from './args.js'
import type { SkippedRecord } from './batch-writer.js'

/**
 * `import --errors-file FILE`: each record left out, one JSON object a line
 * (`{"file","line","code","field"?,"message","raw"?}`), in the order of the
 * input, so the lines can be fixed and imported again. The file is created
 * (or emptied) when the import starts, so an empty file means nothing was left out.
 */
export class ErrorsFile {
  readonly #path: string
  readonly #stream: WriteStream
  #failure: Error | undefined

  private constructor(path: string, stream: WriteStream) {
    this.#path = path
    this.#stream = stream
    stream.on('error', (err) => (this.#failure ??= err))
  }

  /**
   * Creates (or empties) the file at `path`.
   * @throws CliError (exit code 2) when it cannot be written
   */
  static async create(path: string): Promise<ErrorsFile> {
    const stream = createWriteStream(path, { flags: 'w' })
    try {
      await once(stream, 'open')
    } catch (err) {
      throw new CliError(`cannot write the errors file ${path}: ${err instanceof Error ? err.message : String(err)}`, 2, { cause: err })
    }
    return new ErrorsFile(path, stream)
  }

  /** Appends one skipped record (buffered by the stream: skipped records are few next to the records written). */
  add(skipped: SkippedRecord): void {
    this.#stream.write(`${JSON.stringify(skipped)}\n`)
  }

  /**
   * Flushes and closes the file.
   * @throws CliError when a write failed
   */
  async close(): Promise<void> {
    if (!this.#stream.closed) {
      this.#stream.end()
      await once(this.#stream, 'close').catch(() => {})
    }
    if (this.#failure !== undefined) throw new CliError(`cannot write the errors file ${this.#path}: ${this.#failure.message}`, 1, { cause: this.#failure })
  }
}
