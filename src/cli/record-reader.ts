import { createInterface } from 'node:readline'
import type { Readable } from 'node:stream'
import { CliError } from './args.js'
import { ArraySyntaxError, JsonArraySplitter } from './json-array-splitter.js'

/** One parsed input record and where it came from. */
export interface InputRecord {
  readonly value: unknown
  /** Line (1-based) where the record starts. */
  readonly line: number
  /** The record's JSON text as read, when asked for ({@link ReadOptions.keepText}: `import --errors-file`). */
  readonly text?: string
}

/** How {@link readRecords} reads. */
export interface ReadOptions {
  /** Keep each record's text ({@link InputRecord.text}); off by default, since it doubles what a batch holds. */
  readonly keepText?: boolean
}

/** A syntax error in an input file, reported as `FILE:LINE: ...` (exit code 2). */
export class InputSyntaxError extends CliError {
  readonly file: string
  readonly line: number
  /** The text that is not JSON (a line of NDJSON, an array element), when known. */
  readonly text: string | undefined

  constructor(file: string, line: number, message: string, text?: string) {
    super(`${file}:${line}: ${message}`, 2)
    this.file = file
    this.line = line
    this.text = text
  }
}

/**
 * Reads records from NDJSON (one JSON value per line; blank lines skipped) or
 * from a JSON array, told apart by the first non-blank character (`[` means
 * an array). Streams through `readline`: NDJSON holds one line at a time and
 * an array one element (or one line, if a line is longer) at a time.
 *
 * @param file the name used in error messages.
 * @param onBadJson when given, a record that is not valid JSON (a line of
 *   NDJSON, an element of an array) is handed to it and skipped rather than
 *   thrown (`import --skip-bad`). An array whose structure is broken still throws:
 *   where its next element starts cannot be known.
 * @throws InputSyntaxError on malformed JSON, naming the line.
 */
export async function* readRecords(
  input: Readable,
  file: string,
  onBadJson?: (err: InputSyntaxError) => void,
  { keepText = false }: ReadOptions = {},
): AsyncGenerator<InputRecord, void, undefined> {
  const parse = (text: string, line: number, element?: number): InputRecord | undefined => {
    try {
      const value = parseJson(text, file, line, element)
      return keepText ? { value, line, text } : { value, line }
    } catch (err) {
      if (onBadJson === undefined || !(err instanceof InputSyntaxError)) throw err
      onBadJson(err)
      return undefined
    }
  }
  const lines = createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY })
  let lineNumber = 0
  let array: JsonArraySplitter | undefined
  let detected = false
  try {
    for await (let text of lines) {
      lineNumber++
      if (lineNumber === 1 && text.charCodeAt(0) === 0xfeff) text = text.slice(1) // a byte order mark
      if (!detected) {
        const first = /\S/.exec(text)
        if (first === null) continue
        detected = true
        if (first[0] === '[') array = new JsonArraySplitter()
      }
      if (array === undefined) {
        if (text.trim() === '') continue
        const record = parse(text, lineNumber)
        if (record !== undefined) yield record
        continue
      }
      try {
        for (const element of array.push(`${text}\n`, lineNumber)) {
          const record = parse(element.text, element.line, element.index)
          if (record !== undefined) yield record
        }
      } catch (err) {
        if (err instanceof ArraySyntaxError) throw new InputSyntaxError(file, err.line, err.message)
        throw err
      }
    }
    if (array !== undefined) {
      try {
        array.end()
      } catch (err) {
        if (err instanceof ArraySyntaxError) throw new InputSyntaxError(file, err.line, err.message)
        throw err
      }
    }
  } finally {
    lines.close()
  }
}

function parseJson(text: string, file: string, line: number, element?: number): unknown {
  try {
    return JSON.parse(text)
  } catch (err) {
    const where = element === undefined ? '' : ` (array element ${element})`
    throw new InputSyntaxError(file, line, `invalid JSON${where}: ${err instanceof Error ? err.message : String(err)}`, text)
  }
}
