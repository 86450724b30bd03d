/** The records of a `POST /prices` body, with the line each starts on for NDJSON. */
export interface WriteBatch {
  readonly records: unknown[]
  /** NDJSON only: the 1-based line of each record, for error messages. */
  readonly lines?: number[]
}

/** How a body is read: a JSON array, NDJSON, or told by its first non-blank byte. */
export type BodyFormat = 'array' | 'ndjson' | 'sniff'

/** A body that cannot be read as records; `message` says where. */
export class WriteBodyError extends Error {
  override get name(): string {
    return 'WriteBodyError'
  }
}

/**
 * The body format for a `content-type` header: `application/json` is a JSON
 * array, `application/x-ndjson` (and its aliases) NDJSON, no content type at
 * all is sniffed; anything else, or a charset other than UTF-8, is
 * `undefined` (415).
 */
export function bodyFormat(contentType: string | undefined): BodyFormat | undefined {
  if (contentType === undefined || contentType.trim() === '') return 'sniff'
  const [type = '', ...parameters] = contentType.split(';').map((part) => part.trim().toLowerCase())
  const charset = parameters.find((parameter) => parameter.startsWith('charset='))?.slice('charset='.length).replace(/^"|"$/g, '')
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') return undefined
  if (type === 'application/json') return 'array'
  if (NDJSON_TYPES.has(type)) return 'ndjson'
  return undefined
}

const NDJSON_TYPES = new Set(['application/x-ndjson', 'application/ndjson', 'application/jsonl', 'application/x-jsonlines', 'application/jsonlines'])

/**
 * Parses a body into records: a JSON array of records, or NDJSON (one
 * record per line; blank lines skipped). A sniffed body is an array when
 * its first non-blank character is `[`, else NDJSON. A leading byte order
 * mark is dropped.
 * @throws WriteBodyError for text that is not UTF-8, malformed JSON (naming its line and column), or a JSON body that is not an array
 */
export function parseWriteBody(bytes: Buffer, format: BodyFormat): WriteBatch {
  let text: string
  try {
    text = UTF8.decode(bytes)
  } catch {
    throw new WriteBodyError('the body is not valid UTF-8 text')
  }
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1)
  const array = format === 'array' || (format === 'sniff' && /^\s*\[/.test(text))
  return array ? parseArray(text) : parseLines(text)
}

const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })

function parseArray(text: string): WriteBatch {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (err) {
    throw new WriteBodyError(`the body is not valid JSON: ${where(text, err)}`)
  }
  if (!Array.isArray(value)) {
    throw new WriteBodyError(`the body must be a JSON array of records (got ${value === null ? 'null' : typeof value}); send one record per line as application/x-ndjson for NDJSON`)
  }
  return { records: value }
}

function parseLines(text: string): WriteBatch {
  const records: unknown[] = []
  const lines: number[] = []
  let line = 0
  for (const lineText of text.split('\n')) {
    line++
    if (lineText.trim() === '') continue
    try {
      records.push(JSON.parse(lineText))
    } catch (err) {
      throw new WriteBodyError(`line ${line} is not valid JSON: ${where(lineText, err, line)}`)
    }
    lines.push(line)
  }
  return { records, lines }
}

/** `line L column C: <JSON.parse's reason>`, from the position V8 gives in its message. */
function where(text: string, err: unknown, lineOffset?: number): string {
  const reason = err instanceof Error ? err.message : String(err)
  const position = /at position (\d+)/.exec(reason)
  // The reason quotes the text around the fault; only its first words are kept, so a long line is not echoed back.
  const short = reason.replace(/ (in|after) JSON at position \d+.*$/s, '').replace(/, ".*$/s, '').slice(0, 120)
  const offset = position !== null ? Number(position[1]) : /end of JSON input/.test(reason) ? text.length : undefined
  if (offset === undefined) return short
  if (lineOffset !== undefined) return `column ${offset + 1}: ${short}`
  const before = text.slice(0, offset)
  const line = before.split('\n').length
  const column = offset - before.lastIndexOf('\n')
  return `line ${line} column ${column}: ${short}`
}
