/**
 * `GET /prices/batch` and `POST /prices/batch`: batch
 * as-of over HTTP. GET takes `symbols` (comma-separated), `times`
 * (comma-separated integer ms) or the grid `fromTimestamp`, `toTimestamp`,
 * `interval`, and `direction`, `tolerance`; POST takes the same as a JSON
 * body `{symbols, times | grid: {from, to, interval}, direction, tolerance}`
 * for lists too long for a URL (a read: no write token). The batch is checked
 * before it is admitted (a bad one is answered 400 with the library's code,
 * naming the parameter, nothing read) and weighed by the query gate like a
 * `/prices` query (`batchCost`: one seek per entry and side). The answer is
 * the library's JSON, or with `Accept: application/x-ndjson` one line per
 * entry `{symbol,time,record,age}` sent with backpressure.
 *
 * Pages: `limit` (times per page) or `cursor` (a GET
 * parameter, or a body field) ask for one page, every symbol at the next
 * `limit` times (engine/batch-page.ts); the next page's cursor travels in
 * `x-next-cursor` (and, for GET, an RFC 8288 `link: <?...&cursor=C>;
 * rel="next"`, as `/prices` pages), both absent on the last page. The body of
 * a page has the unpaged answer's shape.
 */
import type { IncomingMessage } from 'node:http'
import { batchPageSize, type BatchAsOfPage } from '../../../engine/batch-page.js'
import { readCursor } from '../../../engine/cursor.js'
import { batchCost, toBatchQuery, type BatchAsOfAnswer, type BatchAsOfOptions, type BatchQuery } from '../../../engine/forms/batch.js'
import { describeValue } from '../../../errors.js'
import { toExactJson } from '../../../rules/exact-json.js'
import { fail } from '../../../rules/query-errors.js'
import { DEFAULT_LIMITS, type Limits } from '../../../types.js'
import { fieldSelector } from '../../../engine/field-selection.js'
import type { FieldSelection, PriceRecord } from '../../../types.js'
import type { Reader } from '../access/read-access.js'
import { forbiddenSymbol } from '../access/reader-request.js'
import type { GateRequest, QueryGate } from '../admission/query-gate.js'
import { bodyAnswer, failedAnswer, httpErrorAnswer, type ErrorReportOptions, type HttpAnswer } from '../core/answer.js'
import { drainRequest, readRequestBody } from '../core/request-body.js'
import { StreamedBody } from '../core/streamed-body.js'
import { withNext } from './page-answer.js'

/** What the batch endpoint needs of a store: `PriceStore.batchAsOf` (and its `limits`, when it has them); with `pageSize` or `cursor` it answers a {@link BatchAsOfPage}. */
export interface BatchSource {
  batchAsOf(options: BatchAsOfOptions): Promise<BatchAsOfAnswer | BatchAsOfPage>
  readonly limits?: Limits
}

/** The largest `POST /prices/batch` body: 10,000 times and 1,000 symbols fit with room to spare. */
export const MAX_BATCH_BODY_BYTES = 1024 * 1024
/** How long a `POST /prices/batch` body may take to arrive (ms). */
export const BATCH_BODY_TIMEOUT_MS = 10_000
/** NDJSON lines built between two writes of a streamed answer. */
const LINES_PER_PIECE = 128
const NDJSON = 'application/x-ndjson'
/** Entries past which a JSON answer is streamed when the handler does not say (its `DEFAULT_STREAM_ABOVE`). */
const DEFAULT_STREAM_ABOVE = 256

/**
 * Answers one batch request: reads and checks it, then runs it through
 * `gate`. Never rejects.
 */
export async function answerBatch(
  gate: QueryGate, store: BatchSource, req: IncomingMessage, params: URLSearchParams, options: BatchEndpointOptions, request: GateRequest,
): Promise<HttpAnswer> {
  let query: BatchQuery
  let page: BatchPageAsked | undefined
  if (req.method !== 'POST') req.resume() // a GET's body means nothing; draining it keeps the connection usable
  try {
    const asked = req.method === 'POST' ? await batchOptionsOfBody(req) : batchOptionsOfParams(params)
    if ('status' in asked) return asked
    query = toBatchQuery(asked, store.limits ?? DEFAULT_LIMITS)
    page = pageAsked(asked, req.method === 'POST' ? undefined : params)
  } catch (err) {
    return failedAnswer(options, err)
  }
  const ndjson = (req.headers.accept ?? '').toLowerCase().includes(NDJSON)
  const refused = forbiddenSymbol(request.reader, query.symbols)
  if (refused !== undefined) return refused
  return gate.admit(new BatchJob(store, query, ndjson, options, page, request.reader), options, request)
}

/** `answer` with each record narrowed to the fields a reader may see (`mask`); `answer` itself without one. */
function masked(answer: BatchAsOfAnswer, mask: FieldSelection | undefined): BatchAsOfAnswer {
  if (mask === undefined) return answer
  const select = fieldSelector(mask)
  for (const row of Object.values(answer)) {
    for (const [time, entry] of Object.entries(row)) if (entry !== null) row[time] = { ...entry, record: select(entry.record) as PriceRecord }
  }
  return answer
}

/** Options of the batch endpoint: `onError`, and past how many entries a JSON answer is streamed (the handler's `streamAbove`). */
export interface BatchEndpointOptions extends ErrorReportOptions {
  readonly streamAbove?: number
}

/** A page asked: its size (times), the cursor given (`''` or none: the first page), and for GET the parameters the `link` header repeats. */
interface BatchPageAsked {
  readonly pageSize: number
  readonly cursor?: string
  readonly params?: URLSearchParams
}

/**
 * The page `limit` and `cursor` ask for, or `undefined` when neither is given (the whole answer). The cursor's
 * layout is checked here, before admission; its tag and batch by the store, before anything is read.
 * @throws PriceStoreError `PRICE_INVALID_QUERY` naming `limit` or `cursor`
 */
function pageAsked(asked: BatchRequestOptions, params: URLSearchParams | undefined): BatchPageAsked | undefined {
  const { limit, cursor } = asked
  if (limit === undefined && cursor === undefined) return undefined
  const pageSize = batchPageSize(limit, 'limit')
  if (cursor !== undefined && typeof cursor !== 'string') throw fail('PRICE_INVALID_QUERY', 'cursor', 'cursor must be a string: the x-next-cursor of the page before, or empty for the first page')
  if (typeof cursor === 'string') readCursor(cursor)
  return { pageSize, ...(typeof cursor === 'string' ? { cursor } : {}), ...(params === undefined ? {} : { params }) }
}

/** One checked batch (or page of one) as the gate's job. */
class BatchJob {
  readonly cost: number

  constructor(
    readonly store: BatchSource,
    readonly query: BatchQuery,
    readonly ndjson: boolean,
    readonly options: BatchEndpointOptions,
    readonly page?: BatchPageAsked,
    readonly reader?: Reader,
  ) {
    // A page is weighed by the times it holds at most.
    const times = page === undefined ? query.times : query.times.slice(0, page.pageSize)
    this.cost = batchCost({ ...query, times })
  }

  async run(): Promise<HttpAnswer> {
    const { symbols, times, direction, tolerance, validUntil } = this.query
    const { page } = this
    try {
      const scope = this.reader?.scope()
      const asked = {
        symbols, times, direction, ...(tolerance === undefined ? {} : { tolerance }), ...(validUntil === undefined ? {} : { validUntil }), ...(scope === undefined ? {} : { scope }),
      }
      const mask = this.reader?.fields
      if (page === undefined) return this.answerOf(masked(await this.store.batchAsOf(asked) as BatchAsOfAnswer, mask), times)
      const paged = await this.store.batchAsOf({ ...asked, pageSize: page.pageSize, cursor: page.cursor ?? '' } as BatchAsOfOptions) as BatchAsOfPage
      const first = paged.answer[symbols[0] as string]
      const answer = this.answerOf(masked(paged.answer, mask), first === undefined ? [] : Object.keys(first).map(Number))
      return withNext(answer, paged.next, page.params)
    } catch (err) {
      return failedAnswer(this.options, err)
    }
  }

  /** The 200 answer of `answer` (the batch's entries at `times`). */
  private answerOf(answer: BatchAsOfAnswer, times: readonly number[]): HttpAnswer {
    const { symbols } = this.query
    const entries = symbols.length * times.length
    if (this.ndjson) return streamed(`${NDJSON}; charset=utf-8`, entries, ndjsonPieces(answer, symbols, times))
    // A large answer (up to 100,000 records) is written piece by piece, as a large /prices answer is.
    if (entries > (this.options.streamAbove ?? DEFAULT_STREAM_ABOVE)) return streamed('application/json; charset=utf-8', entries, jsonPieces(answer))
    return bodyAnswer(200, toExactJson(answer))
  }
}

/** Batch options as a request gives them, with the page fields `limit` and `cursor` (checked by {@link pageAsked}). */
export type BatchRequestOptions = BatchAsOfOptions & { readonly limit?: unknown; readonly cursor?: unknown }

/** A 200 answer whose body is sent as `pieces` are made. */
function streamed(contentType: string, entries: number, pieces: Iterator<string, void, undefined>): HttpAnswer {
  return { status: 200, headers: { 'content-type': contentType }, body: '', stream: new StreamedBody(entries, pieces) }
}

/**
 * The answer's JSON text, the same as `toExactJson(answer)`, a few entries a piece. Keys in the object's
 * own order (a symbol such as `42` is an integer key, which JavaScript lists first).
 */
function* jsonPieces(answer: BatchAsOfAnswer): Generator<string, void, undefined> {
  let piece = '{'
  let lines = 0
  let comma = ''
  for (const symbol of Object.keys(answer)) {
    const entries = answer[symbol] as BatchAsOfAnswer[string]
    piece += `${comma}${JSON.stringify(symbol)}:{`
    comma = ','
    let inner = ''
    for (const key of Object.keys(entries)) {
      piece += `${inner}${JSON.stringify(key)}:${toExactJson(entries[key] ?? null)}`
      inner = ','
      if (++lines === LINES_PER_PIECE) {
        yield piece
        piece = ''
        lines = 0
      }
    }
    piece += '}'
  }
  yield `${piece}}`
}

/** The answer as NDJSON, symbol by symbol, times ascending: a few lines a piece, built as the sender asks. */
function* ndjsonPieces(answer: BatchAsOfAnswer, symbols: readonly string[], times: readonly number[]): Generator<string, void, undefined> {
  let piece = ''
  let lines = 0
  for (const symbol of symbols) {
    const entries = answer[symbol] as BatchAsOfAnswer[string]
    for (const time of times) {
      const entry = entries[String(time)] ?? null
      piece += `${toExactJson({ symbol, time, record: entry?.record ?? null, age: entry?.age ?? null })}\n`
      if (++lines === LINES_PER_PIECE) {
        yield piece
        piece = ''
        lines = 0
      }
    }
  }
  if (piece !== '') yield piece
}

/**
 * The batch asked by GET parameters (each at most once; others ignored, as on `/prices`).
 * @throws PriceStoreError `PRICE_INVALID_QUERY` naming the parameter
 */
export function batchOptionsOfParams(params: URLSearchParams): BatchRequestOptions {
  const one = (name: string): string | undefined => {
    const values = params.getAll(name)
    if (values.length > 1) throw fail('PRICE_INVALID_QUERY', name, `parameter ${name} must be given at most once`)
    return values[0]
  }
  const symbols = one('symbols')
  if (symbols === undefined || symbols === '') throw fail('PRICE_INVALID_QUERY', 'symbols', 'symbols is required: a comma-separated list')
  const times = one('times')
  const from = integerParam('fromTimestamp', one('fromTimestamp'))
  const to = integerParam('toTimestamp', one('toTimestamp'))
  const interval = integerParam('interval', one('interval'))
  const gridGiven = from !== undefined || to !== undefined || interval !== undefined
  if (gridGiven && (from === undefined || to === undefined || interval === undefined)) {
    const missing = from === undefined ? 'fromTimestamp' : to === undefined ? 'toTimestamp' : 'interval'
    throw fail('PRICE_INVALID_QUERY', missing, 'a grid of times needs fromTimestamp, toTimestamp and interval')
  }
  if (gridGiven && times !== undefined) throw fail('PRICE_INVALID_QUERY', 'times', 'give times or a grid (fromTimestamp, toTimestamp, interval), not both')
  const direction = one('direction')
  const tolerance = integerParam('tolerance', one('tolerance'))
  const limit = integerParam('limit', one('limit'))
  const cursor = one('cursor')
  const validUntil = one('validUntil')
  if (validUntil !== undefined && validUntil !== 'true' && validUntil !== 'false') {
    throw fail('PRICE_INVALID_QUERY', 'validUntil', `validUntil must be true or false (got ${describeValue(validUntil)})`)
  }
  return {
    symbols: symbols.split(','),
    ...(times === undefined ? {} : { times: times.split(',').map((t) => integerParam('times', t) as number) }),
    ...(gridGiven ? { grid: { from: from as number, to: to as number, interval: interval as number } } : {}),
    ...(direction === undefined ? {} : { direction: direction as BatchAsOfOptions['direction'] }),
    ...(tolerance === undefined ? {} : { tolerance }),
    ...(limit === undefined ? {} : { limit }),
    ...(cursor === undefined ? {} : { cursor }),
    ...(validUntil === undefined ? {} : { validUntil: validUntil === 'true' }),
  } as BatchRequestOptions
}

/** A non-negative decimal integer parameter, with no leading zero (stricter than `/prices`, which reads `0001` as 1). */
function integerParam(name: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined
  if (!/^(0|[1-9][0-9]*)$/.test(text) || !Number.isSafeInteger(Number(text))) {
    throw fail('PRICE_INVALID_QUERY', name, `${name} must be a non-negative integer (ms) (got ${describeValue(text)})`)
  }
  return Number(text)
}

/** The batch asked by a POST body (JSON object), or the answer refusing the body. */
async function batchOptionsOfBody(req: IncomingMessage): Promise<BatchRequestOptions | HttpAnswer> {
  const read = await readRequestBody(req, MAX_BATCH_BODY_BYTES, BATCH_BODY_TIMEOUT_MS)
  if (read.kind === 'too-large') {
    drainRequest(req)
    return httpErrorAnswer(413, 'HTTP_PAYLOAD_TOO_LARGE', `a batch body may hold at most ${MAX_BATCH_BODY_BYTES} bytes`)
  }
  if (read.kind === 'timeout') {
    drainRequest(req)
    return httpErrorAnswer(408, 'HTTP_REQUEST_TIMEOUT', `the batch body did not arrive within ${BATCH_BODY_TIMEOUT_MS} ms`)
  }
  if (read.kind === 'aborted') return httpErrorAnswer(400, 'HTTP_BAD_REQUEST', 'the client left before the body ended')
  let body: unknown
  try {
    body = JSON.parse(read.bytes.toString('utf8'))
  } catch {
    throw fail('PRICE_INVALID_QUERY', 'body', 'the body must be a JSON object {symbols, times | grid, direction, tolerance}')
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw fail('PRICE_INVALID_QUERY', 'body', 'the body must be a JSON object {symbols, times | grid, direction, tolerance}')
  }
  const { symbols, times, grid, direction, tolerance, limit, cursor, validUntil } = body as Record<string, unknown>
  return { symbols, times, grid, direction, tolerance, limit, cursor, validUntil } as unknown as BatchRequestOptions
}
