import type { IncomingMessage, ServerResponse } from 'node:http'
import { performance } from 'node:perf_hooks'
import { httpErrorAnswer, reportError, type AnswerOptions, type HttpAnswer, type PricesQueryable } from './answer.js'
import { ChartPage, type ChartPageOptions } from './chart-page.js'
import { MAX_TIMER_MS, checkIntegerOption } from '../../rules/options.js'
import { QueryGate, type GateRequest, type QueryLimitOptions, type QueryLoad } from './query-gate.js'
import { checkBasePath, notFoundAnswer, routeRequest, type RouteTable } from './routes.js'
import { DEFAULT_SEND_STALL_MS, sendStreamed, type StreamSendOptions as SendOptions } from './streamed-body.js'
import { answerUdf, type UdfSource } from './udf.js'
import { historyThroughGate } from './udf-gate.js'
import { LiveCounters, createLiveEndpoints, type LiveEndpointOptions } from './live-endpoints.js'
import { isoTime, type AccessLogEntry } from './access-log.js'
import { HandlerMetrics, NO_FORM, formLabel } from './metrics.js'
import type { QueryPlan } from '../../engine/plan.js'
import type { Route } from './routes.js'

/**
 * Options of {@link createPricesHandler} (and of `createPricesListener` and
 * `startServer`): `onError` for logging what clients are not shown, the
 * limits on queries (see {@link QueryLimitOptions}), where the chart page's
 * script is, and the path prefix the endpoints are served under.
 */
export interface PricesHandlerOptions extends AnswerOptions, QueryLimitOptions, ChartPageOptions, LiveEndpointOptions {
  /**
   * The prefix of every path served, e.g. `'/v1'` for `/v1/prices` and
   * `/v1/udf/...` (default none). It is compared with the request's whole
   * path: `req.originalUrl` where a framework keeps it (Express, which cuts
   * its mount path out of `req.url`), else `req.url`. Without it, the path
   * is `req.url`: relative to where a framework mounted the handler. The
   * chart page is served only without a prefix (its script asks the root).
   */
  readonly basePath?: string
  /**
   * `/prices` answers of more records than this are streamed: serialised and
   * sent piece by piece with backpressure (chunked, without
   * `content-length`), so their size does not weigh on the server's memory
   * (default {@link DEFAULT_STREAM_ABOVE}).
   */
  readonly streamAbove?: number
  /**
   * Time a streamed answer waits for its client to read a full socket
   * buffer before the connection is cut (ms, default 30,000).
   */
  readonly sendStallMs?: number
}

/** Default size, in records, above which a `/prices` answer is streamed (about 350 KB of JSON). */
export const DEFAULT_STREAM_ABOVE = 256

/** What a host calls when a request is not for this handler; Express's `next` fits. */
export type NextHandler = (err?: unknown) => void

/**
 * A request handler for `node:http` and for frameworks that hand over
 * Node's request and response (Express, Connect, Fastify's `raw`): it
 * answers the paths it serves and passes every other one to `next`, or
 * answers 404 when there is no `next`.
 */
export interface PricesHandler {
  (req: IncomingMessage, res: ServerResponse, next?: NextHandler): void
  /** The load of this handler's query gate now, and its counts of refused and timed-out queries. */
  queries(): QueryLoad
  /** Ends what outlives a request (live streams, each with a final event) so a server can close; resolves once done. */
  close(): Promise<void>
}

/**
 * A handler serving `GET`/`HEAD ${basePath}/prices` (and `/prices/`) from
 * `store` and, when the store can also answer candles (a `PriceStore` can;
 * see {@link UdfSource}), TradingView's UDF endpoints under
 * `${basePath}/udf/` and, without a `basePath`, the chart page at `/`. Other
 * methods on those paths answer 405 with `Allow: GET, HEAD`; other paths go
 * to `next` (or answer 404 without one). It never throws: unexpected
 * failures become a 500 without internals.
 *
 * Every request it serves goes through its own query gate (one per handler,
 * shared by all its routes): heavy queries (UDF history included) are
 * capped and wait in a bounded line, and every query has a time budget,
 * past which it answers 503 `HTTP_BUSY` / `HTTP_QUERY_TIMEOUT` (see
 * {@link QueryLimitOptions}).
 *
 * @throws PriceStoreError `PRICE_INVALID_OPTIONS` for a bad `basePath` or limit
 * @example
 * const prices = createPricesHandler(store, { basePath: '/v1', maxConcurrentQueries: 2 })
 * app.use(prices)                                   // Express: /v1/prices
 * http.createServer((req, res) => prices(req, res)).listen(9000)
 */
export function createPricesHandler(store: PricesQueryable, options: PricesHandlerOptions = {}): PricesHandler {
  const gate = new QueryGate(options)
  const streamAbove = checkIntegerOption('streamAbove', options.streamAbove, DEFAULT_STREAM_ABOVE, 0, Number.MAX_SAFE_INTEGER)
  const send: SendOptions = {
    stallMs: checkIntegerOption('sendStallMs', options.sendStallMs, DEFAULT_SEND_STALL_MS, 1, MAX_TIMER_MS),
    onError: (err) => reportError(options, err),
  }
  const pricesOptions = { ...options, streamAbove }
  const charts = chartSource(store)
  const counters = new LiveCounters()
  const metrics = options.metrics === true ? new HandlerMetrics({ store, gate, counters }) : undefined
  const observer = metrics === undefined && options.accessLog === undefined ? undefined : new RequestObserver(metrics, options)
  const live = createLiveEndpoints({ store, options, gate, counters, ...(metrics === undefined ? {} : { metrics }) })
  const table: RouteTable = { charts: charts !== undefined, basePath: checkBasePath(options.basePath), ...live.table }
  const page = new ChartPage(options)
  // With a prefix, the whole path: Express keeps it in originalUrl once it has cut its mount path from url.
  const targetOf =
    table.basePath === '' ? (req: IncomingMessage) => req.url ?? '' : (req: IncomingMessage) => (req as { originalUrl?: unknown }).originalUrl ?? req.url ?? ''
  const handler = (req: IncomingMessage, res: ServerResponse, next?: NextHandler): void => {
    const head = req.method === 'HEAD'
    try {
      const arrivedAt = performance.now()
      const target = targetOf(req)
      const routed = routeRequest(req.method, typeof target === 'string' ? target : '', table)
      if (routed === undefined && next !== undefined) {
        next() // not ours: the body is left for whoever serves the path
        return
      }
      const observed = observer?.start(req, res, arrivedAt, target, routed)
      if (routed !== undefined && 'live' in routed) {
        // The endpoint owns the request from here, its body included.
        live.serve(routed.live, { req, res, params: routed.params, head, arrivedAt })
        return
      }
      // Bodies mean nothing here; draining them keeps a keep-alive connection usable.
      req.resume()
      if (routed === undefined) {
        sendAnswer(res, notFoundAnswer(table), head)
        return
      }
      if ('answer' in routed) {
        sendAnswer(res, routed.answer, head)
        return
      }
      if ('page' in routed) {
        sendAnswer(res, routed.page === 'html' ? page.page() : page.script(), head)
        return
      }
      if ('udf' in routed) {
        const runHistory = historyThroughGate(gate, store, options, new HandlerRequest(arrivedAt, res, observed))
        answerUdf(charts as UdfSource, routed.udf, routed.params, { ...options, runHistory }).then(
          (ready) => sendOrFail(options, res, ready, head),
          (err: unknown) => failRequest(options, res, err, head),
        )
        return
      }
      // No async function and no named closure per request (tsx names each with a
      // defineProperty call): at thousands of requests a second, each shows in the profile.
      gate.answer(store, routed.params, pricesOptions, new HandlerRequest(arrivedAt, res, observed)).then(
        (answer) => sendOrFail(options, res, answer, head, send),
        (err: unknown) => failRequest(options, res, err, head),
      )
    } catch (err) {
      failRequest(options, res, err, head)
    }
  }
  return Object.assign(handler, { queries: () => gate.load(), close: () => live.close() })
}

/** What the gate needs to know about one request: when it came, and (only if its query must wait) when its client leaves. */
class HandlerRequest implements GateRequest {
  constructor(
    readonly arrivedAt: number,
    readonly res: ServerResponse,
    readonly observed: ObservedRequest | undefined,
  ) {}

  /** Labels the observed request (metrics, access log) with its query's form. */
  planned(plan: QueryPlan): void {
    if (this.observed !== undefined) this.observed.form = formLabel(plan.query)
  }

  /**
   * A client that leaves while its query waits for a slot takes the query with it. The
   * signal is built only when a query must wait: one per request cost 18 % of server CPU.
   */
  signal(): AbortSignal {
    const gone = new AbortController()
    if (this.res.closed) gone.abort()
    else this.res.once('close', () => gone.abort())
    return gone.signal
  }
}

/** Where the observation of a response is kept, for the one `close` listener all responses share. */
const OBSERVED = Symbol('observed request')

/** The `endpoint` label of each route that is not a live endpoint or a UDF one. */
const UDF_ENDPOINTS: Readonly<Record<string, string>> = { config: 'udf_config', symbols: 'udf_symbols', search: 'udf_search', history: 'udf_history', time: 'udf_time' }

/** What answers a route, as metrics and the access log name it. */
function endpointOf(routed: Route | undefined): string {
  if (routed === undefined) return 'not_found'
  if ('answer' in routed) return 'method_not_allowed'
  if ('page' in routed) return 'page'
  if ('live' in routed) return routed.live
  if ('udf' in routed) return UDF_ENDPOINTS[routed.udf] ?? 'udf'
  return 'prices'
}

/** One request watched from its arrival to its response's `close` (answer ended, or connection gone). */
class ObservedRequest {
  /** The query's form label, once its plan is made. */
  form: string | undefined = undefined

  constructor(
    readonly observer: RequestObserver,
    readonly req: IncomingMessage,
    readonly arrivedAt: number,
    readonly target: string,
    readonly endpoint: string,
    /** The connection's bytes written before this answer (a keep-alive connection carries several). */
    readonly bytesBefore: number,
  ) {}
}

/**
 * Watches requests for the handler's metrics and access log, only when one
 * of them is on: one object and one shared listener per request, nothing else.
 */
class RequestObserver {
  constructor(
    readonly metrics: HandlerMetrics | undefined,
    readonly options: PricesHandlerOptions,
  ) {}

  start(req: IncomingMessage, res: ServerResponse, arrivedAt: number, target: unknown, routed: Route | undefined): ObservedRequest {
    // The socket's count sums its queued writes (an array built per read): only the access log needs it.
    const bytesBefore = this.options.accessLog === undefined ? 0 : (req.socket?.bytesWritten ?? 0)
    const observed = new ObservedRequest(this, req, arrivedAt, typeof target === 'string' ? target : '', endpointOf(routed), bytesBefore)
    ;(res as ServerResponse & { [OBSERVED]?: ObservedRequest })[OBSERVED] = observed
    res.on('close', closeObserved)
    return observed
  }

  finish(observed: ObservedRequest, res: ServerResponse): void {
    const durationMs = performance.now() - observed.arrivedAt
    const status = res.headersSent ? res.statusCode : 0
    const form = observed.form
    this.metrics?.record(observed.endpoint, form ?? NO_FORM, status, durationMs / 1000)
    const accessLog = this.options.accessLog
    if (accessLog === undefined) return
    try {
      accessLog(accessLogEntry(observed, res, status, durationMs))
    } catch (err) {
      reportError(this.options, err)
    }
  }
}

/** The `close` listener of every observed response (`this` is the response): one function for all, no closure per request. */
function closeObserved(this: ServerResponse): void {
  const observed = (this as ServerResponse & { [OBSERVED]?: ObservedRequest })[OBSERVED]
  observed?.observer.finish(observed, this)
}

function accessLogEntry(observed: ObservedRequest, res: ServerResponse, status: number, durationMs: number): AccessLogEntry {
  const { req, target } = observed
  const question = target.indexOf('?')
  const socket = req.socket
  // One literal of fixed shape (absent fields are undefined, which JSON leaves out): no spread per request.
  return {
    time: isoTime(Math.floor(performance.timeOrigin + observed.arrivedAt)),
    method: req.method ?? '',
    path: question < 0 ? target : target.slice(0, question),
    query: question < 0 ? '' : target.slice(question + 1),
    endpoint: observed.endpoint,
    form: observed.form,
    status,
    bytes: socket === undefined || socket === null ? 0 : Math.max(0, (socket.bytesWritten ?? observed.bytesBefore) - observed.bytesBefore),
    durationMs: Math.round(durationMs * 1000) / 1000,
    remoteAddress: socket?.remoteAddress,
    aborted: res.writableFinished ? undefined : true,
  }
}

function sendOrFail(options: AnswerOptions, res: ServerResponse, answer: HttpAnswer, head: boolean, send?: SendOptions): void {
  try {
    if (answer.stream !== undefined && send !== undefined) sendStreamed(res, answer.status, answer.headers, answer.stream, head, send)
    else sendAnswer(res, answer, head)
  } catch (err) {
    answer.stream?.end()
    failRequest(options, res, err, head)
  }
}

/** Something unexpected broke: log it, and answer 500 without internals if nothing is out yet. */
function failRequest(options: AnswerOptions, res: ServerResponse, err: unknown, head: boolean): void {
  reportError(options, err)
  try {
    if (res.headersSent) throw err // half an answer is out: only closing the connection is honest
    sendAnswer(res, httpErrorAnswer(500, 'HTTP_INTERNAL_ERROR', 'internal error while answering the request'), head)
  } catch {
    res.destroy()
  }
}

/** Sends a complete answer; for HEAD, the headers GET would send (content-length included) and no body. */
export function sendAnswer(res: ServerResponse, answer: HttpAnswer, head = false): void {
  // The client may have gone while the query ran; there is no one to answer.
  if (res.destroyed || res.writableEnded) return
  res.writeHead(answer.status, answer.headers)
  if (head) res.end()
  else res.end(answer.body)
}

/**
 * The store as a source of charts, when it is one. Checked once per
 * handler: a host may serve `/prices` from anything with `query` (a stub,
 * a proxy); charts need candles, symbols and the latest records too.
 */
function chartSource(store: PricesQueryable): UdfSource | undefined {
  const candidate = store as Partial<UdfSource>
  const methods = [candidate.candles, candidate.symbols, candidate.latest]
  const charts = methods.every((method) => typeof method === 'function') && candidate.limits !== undefined && candidate.provider !== undefined
  return charts ? (store as unknown as UdfSource) : undefined
}
