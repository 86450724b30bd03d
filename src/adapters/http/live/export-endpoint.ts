import type { ServerResponse } from 'node:http'
import { readerExport, readerParams } from '../access/reader-request.js'
import type { Writable } from 'node:stream'
import { fail } from '../../../rules/query-errors.js'
import { parseTimeText, readClockOnce, timeTextProblem } from '../../../rules/time-text.js'
import type { ExportOptions } from '../../../engine/typed-queries.js'
import type { FieldSelection, PriceRecord } from '../../../types.js'
import { parseFieldSelection } from '../../../rules/fields.js'
import { MAX_TIMER_MS, checkIntegerOption } from '../../../rules/options.js'
import { busyAnswer, failedAnswer, reportError, type ErrorReportOptions } from '../core/answer.js'
import { sendAnswer } from '../core/send.js'
import type { AnswerCompression } from '../core/compression.js'
import { EXPORT_FORMATS, exportEncoder, type ExportEncoder, type ExportFormat } from '../core/export-format.js'
import { PARQUET_CONTENT_TYPE, checkParquetSelection } from '../core/parquet-export.js'
import { DEFAULT_SEND_STALL_MS, openStreamedBody, sendStreamedHead, untilDrained } from '../core/streamed-body.js'
import type { LiveCounters, LiveEndpointHandler } from './endpoint.js'

/** What `GET /prices/export` needs of a store: `PriceStore.export`. */
export interface Exportable {
  export(options?: ExportOptions): AsyncIterable<PriceRecord>
}

/** Options of `GET /prices/export` (part of the handler's options). */
export interface ExportEndpointOptions {
  /**
   * Exports sent at once; one more is answered 503 `HTTP_BUSY` with
   * `retry-after` (default {@link DEFAULT_MAX_EXPORTS}). Each holds a
   * snapshot of the store, which keeps LevelDB from freeing what later
   * writes replace, and reads outside the query gate; `0` turns exports off.
   */
  readonly maxExports?: number
  /** Time a client may leave a full socket unread before its export's connection is cut (ms, default 30,000). */
  readonly exportStallMs?: number
}

/** Default most exports sent at once. */
export const DEFAULT_MAX_EXPORTS = 4

/** The parameters `GET /prices/export` takes; any other is refused (a `fromTimestamp` meant as `from` must not widen an export silently). */
export const EXPORT_PARAMETERS = ['symbol', 'symbols', 'from', 'to', 'fields', 'format'] as const

// A snapshot of now: a cache must not serve it again as current.
const HEADERS: Readonly<Record<ExportFormat, Readonly<Record<string, string>>>> = {
  ndjson: { 'content-type': 'application/x-ndjson', 'cache-control': 'no-store' },
  csv: { 'content-type': 'text/csv; charset=utf-8', 'cache-control': 'no-store' },
  parquet: { 'content-type': PARQUET_CONTENT_TYPE, 'cache-control': 'no-store', 'content-disposition': 'attachment; filename="prices.parquet"' },
}

/** How an export's body is written: its headers, its pieces, and whether an accepted coding may compress it. */
interface ExportBody {
  readonly headers: Readonly<Record<string, string>>
  /** Made when the body is sent (not for a HEAD or a refused export: a Parquet encoder holds a buffer). */
  readonly encoder: () => ExportEncoder
  /** Parquet's pages are compressed already (Snappy): an HTTP coding would spend CPU for little. */
  readonly compressible: boolean
}

/** Bytes written at once from a Parquet row group, each with backpressure, so a slow client is cut for reading nothing, not for a large group. */
const WRITE_BYTES = 64 * 1024

/**
 * The selection an export request asks for, with the names and time forms
 * of `price-store export`: `symbol` (repeatable, or comma-separated) and
 * `symbols` (comma-separated) together name the symbols (every symbol when
 * neither is given); `from` and `to` are times as {@link parseTimeText}
 * reads them (relative ones from one reading of `now`). The store checks the rest (symbol rules, `from <= to`).
 * @throws PriceStoreError `PRICE_INVALID_QUERY` (an unknown or repeated parameter), `PRICE_INVALID_RANGE` (a bad time)
 */
export function exportSelectionOf(params: URLSearchParams, now: () => number = Date.now): ExportOptions {
  const symbols: string[] = []
  let from: number | undefined
  let to: number | undefined
  const seen = new Set<string>()
  const readNow = readClockOnce(now)
  for (const [name, value] of params) {
    if (name === 'symbol' || name === 'symbols') {
      symbols.push(...value.split(','))
      continue
    }
    if (name === 'fields' || name === 'format') continue // read by exportFieldsOf, exportFormatOf
    if (name !== 'from' && name !== 'to') {
      const known = EXPORT_PARAMETERS.join(', ')
      throw fail('PRICE_INVALID_QUERY', name, `unknown parameter ${JSON.stringify(name)}: /prices/export takes ${known}`)
    }
    if (seen.has(name)) throw fail('PRICE_INVALID_QUERY', name, `parameter ${name} is given more than once`)
    seen.add(name)
    const time = parseTimeText(value, readNow)
    if (time === undefined) throw fail('PRICE_INVALID_RANGE', name, timeTextProblem(name, value))
    if (name === 'from') from = time
    else to = time
  }
  return {
    ...(symbols.length === 0 ? {} : { symbols }),
    ...(from === undefined ? {} : { from }),
    ...(to === undefined ? {} : { to }),
  }
}

/**
 * `GET /prices/export`: every stored record of the selection (see
 * {@link exportSelectionOf}) as NDJSON, one record per line, with
 * `format=csv` as CSV under a header line, or with `format=parquet` as a
 * Parquet file written a row group at a time (never compressed again by an
 * HTTP coding), exactly as `price-store export` writes them (see
 * core/export-format.ts), read from one snapshot of the store with no cap.
 * The parameters are checked and the first record read before the
 * status is sent, so a bad request or a closed store gets a coded error.
 * The body is written with backpressure (a slow client holds back its own
 * export, not the server's memory; one that reads nothing for
 * `exportStallMs` is cut). At most `maxExports` are sent at once.
 * A client that leaves stops the export; a failure once the status is sent
 * cuts the connection, the only honest way to say the body is incomplete.
 * Exports do not go through the query gate: they are long by nature, and
 * read a symbol-hour at a time.
 */
export function createExportEndpoint(store: Exportable, options: ExportEndpointOptions & ErrorReportOptions, counters: LiveCounters): LiveEndpointHandler {
  const maxExports = checkIntegerOption('maxExports', options.maxExports, DEFAULT_MAX_EXPORTS, 0, 1_000_000)
  const stallMs = checkIntegerOption('exportStallMs', options.exportStallMs, DEFAULT_SEND_STALL_MS, 1, MAX_TIMER_MS)
  return ({ req, res, params: given, head, compression, reader }) => {
    req.resume() // a body means nothing here
    // Checked before the export is counted, so a bad request is its own 400 even at the limit.
    let exported: AsyncIterable<PriceRecord>
    let written: ExportBody
    const gone = new AbortController()
    try {
      // A reader with read keys exports only what it may read: its fields, symbols and delay.
      const params = readerParams(reader, given)
      if ('status' in params) return sendAnswer(res, params, head)
      const scoped = readerExport(reader, exportSelectionOf(params))
      if ('status' in scoped) return sendAnswer(res, scoped, head)
      exported = scoped.none === true ? noRecords() : store.export({ ...scoped.selection, signal: gone.signal })
      written = exportBodyOf(params)
    } catch (err) {
      sendAnswer(res, failedAnswer(options, err), head)
      return
    }
    // HEAD reads nothing: the iterable holds no snapshot until it is iterated.
    if (head) return sendStreamedHead(res, 200, written.headers, written.compressible ? compression : undefined)
    if (counters.exports >= maxExports) {
      const message = maxExports === 0
        ? 'this server sends no export (maxExports is 0)'
        : `${maxExports} exports are being sent, the most this server sends at once; try again later`
      return sendAnswer(res, busyAnswer(message), false)
    }
    counters.exports++
    void sendExport(exported, written, gone, options, stallMs, res, written.compressible ? compression : undefined).finally(() => counters.exports--)
  }
}

/** An export of nothing: the format's empty file. */
async function* noRecords(): AsyncGenerator<PriceRecord> {}

/**
 * Sends one export's records as the body of `res`: the status once the first
 * record is read (or a coded error), then the encoder's pieces (text of
 * about 64 kB, or a Parquet row group in writes of {@link WRITE_BYTES})
 * with backpressure. Never throws; ends the export's iterator when done.
 */
async function sendExport(
  exported: AsyncIterable<PriceRecord>, written: ExportBody, gone: AbortController, options: ErrorReportOptions, stallMs: number, res: ServerResponse, compression: AnswerCompression | undefined,
): Promise<void> {
  const leave = (): void => gone.abort()
  res.once('close', leave)
  let records: AsyncIterator<PriceRecord> | undefined
  try {
    let step: IteratorResult<PriceRecord>
    try {
      records = exported[Symbol.asyncIterator]()
      step = await records.next()
    } catch (err) {
      if (gone.signal.aborted) return // the client left: no one to answer
      sendAnswer(res, failedAnswer(options, err), false)
      return
    }
    if (res.destroyed) return // the client left during the first read
    // The body goes into a compressor when the request accepts a coding (see openStreamedBody).
    const body = openStreamedBody(res, 200, written.headers, compression, (err) => reportError(options, err))
    const encoder = written.encoder()
    for (; step.done !== true; step = await records.next()) {
      const piece = encoder.add(step.value)
      if (piece === undefined) continue
      if (res.destroyed) return // the client left while the records were read
      if (!(await writePiece(body, piece, res, stallMs))) return
    }
    const last = encoder.end()
    if (typeof last !== 'string' && !(await writePiece(body, last, res, stallMs))) return
    if (!res.destroyed) body.end(typeof last === 'string' ? last : undefined)
  } catch (err) {
    if (gone.signal.aborted) return
    reportError(options, err)
    res.destroy()
  } finally {
    res.off('close', leave)
    await records?.return?.().catch(() => {})
  }
}

/**
 * The `fields` selection of an export request (as on `/prices`, see
 * rules/fields.ts), or `undefined` for whole records. An export with
 * `fields` writes only those fields: its lines are then no longer records
 * `price-store import` takes.
 * @throws PriceStoreError `PRICE_INVALID_QUERY` for a malformed or repeated `fields`
 */
export function exportFieldsOf(params: URLSearchParams): FieldSelection | undefined {
  const values = params.getAll('fields')
  if (values.length > 1) throw fail('PRICE_INVALID_QUERY', 'fields', `parameter fields is given more than once (got ${values.map((value) => JSON.stringify(value)).join(', ')})`)
  return values.length === 0 ? undefined : parseFieldSelection('fields', values[0])
}

/**
 * The `format` of an export request: `ndjson` (the default), `csv` or
 * `parquet`, the formats of `price-store export --format`.
 * @throws PriceStoreError `PRICE_INVALID_QUERY` for another or a repeated `format`
 */
export function exportFormatOf(params: URLSearchParams): ExportFormat {
  const values = params.getAll('format')
  if (values.length > 1) throw fail('PRICE_INVALID_QUERY', 'format', `parameter format is given more than once (got ${values.map((value) => JSON.stringify(value)).join(', ')})`)
  if (values.length === 0) return 'ndjson'
  const format = EXPORT_FORMATS.find((known) => known === values[0])
  if (format === undefined) throw fail('PRICE_INVALID_QUERY', 'format', `format must be ${EXPORT_FORMATS.slice(0, -1).join(', ')} or ${EXPORT_FORMATS.at(-1)} (got ${JSON.stringify(values[0])})`)
  return format
}

/** The body an export request asks for: its format's headers and encoder, with its `fields`. */
function exportBodyOf(params: URLSearchParams): ExportBody {
  const format = exportFormatOf(params)
  const selection = exportFieldsOf(params)
  if (format === 'parquet') checkParquetSelection('fields', selection)
  return { headers: HEADERS[format], encoder: () => exportEncoder(format, selection), compressible: format !== 'parquet' }
}

/**
 * Writes one piece to the body: text at once, bytes in slices of
 * {@link WRITE_BYTES}; after each write, waits for the client when its
 * buffer is full (cut after `stallMs` without a drain), else lets other
 * requests in. Whether the client is still there.
 */
async function writePiece(body: Writable, piece: string | Uint8Array, res: ServerResponse, stallMs: number): Promise<boolean> {
  const slices = typeof piece === 'string' ? 1 : Math.ceil(piece.length / WRITE_BYTES)
  for (let i = 0; i < slices; i++) {
    const flowing = body.write(typeof piece === 'string' ? piece : piece.subarray(i * WRITE_BYTES, (i + 1) * WRITE_BYTES))
    // Waits for the client when its buffer is full; else lets other requests in between pieces.
    await (flowing ? nextTurn() : untilDrained(res, stallMs, () => res.destroy(), body).done)
    if (res.destroyed) return false
  }
  return true
}

function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve))
}
