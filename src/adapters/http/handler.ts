import type { IncomingMessage, ServerResponse } from 'node:http'
import { performance } from 'node:perf_hooks'
import type { QueryPlan } from '../../engine/query-plan.js'
import { MAX_TIMER_MS, checkIntegerOption } from '../../rules/options.js'
import { QueryGate } from './admission/query-gate.js'
import type { QueryLimitOptions, QueryLoad } from './admission/query-limits.js'
import { supportsOf } from './capabilities.js'
import { AnswerCompression, type CompressionOptions } from './core/compression.js'
import { CorsPolicy, type CorsOptions } from './core/cors.js'
import { failRequest, sendAnswer, sendOrFail } from './core/send.js'
import { DEFAULT_SEND_STALL_MS, type StreamSendOptions as SendOptions } from './core/streamed-body.js'
import { LiveCounters } from './live/endpoint.js'
import { createLiveEndpoints, type LiveEndpointOptions } from './live/live-endpoints.js'
import { OpenApiDocument, type OpenApiOptions } from './live/openapi-endpoint.js'
import { PositionFloor, floorAnswer, type FloorRefusal } from './live/min-position.js'
import { checkReplicaOptions } from './live/replica.js'
import { HandlerMetrics } from './observe/metrics.js'
import { createRequestHooks, type RequestTrace } from './observe/request-observer.js'
import { reportError } from './core/answer.js'
import type { AnswerOptions, PricesQueryable } from './prices/answer.js'
import { answerBatch, servesBatch, type BatchSource } from './prices/batch-endpoint.js'
import { answerThroughGate, type PricesRequest } from './prices/through-gate.js'
import { checkBasePath, endpointName, notFoundAnswer, routeRequest, type Route, type RouteTable } from './routes.js'
import { ChartPage, type ChartPageOptions } from './udf/chart-page.js'
import { answerUdf, type UdfSource } from './udf/udf.js'
import { historyThroughGate } from './udf/udf-gate.js'

/**
 * Options of {@link createPricesHandler} (and of `createPricesListener` and
 * `startServer`): `onError` for logging what clients are not shown, the
 * limits on queries (see {@link QueryLimitOptions}), where the chart page's
 * script is, and the path prefix the endpoints are served under.
 */
export interface PricesHandlerOptions extends AnswerOptions, QueryLimitOptions, ChartPageOptions, LiveEndpointOptions, OpenApiOptions {
  /**
   * The prefix of every path served, e.g. `'/v1'` for `/v1/prices` and
   * `/v1/udf/...` (default none). It is compared with the request's whole
   * path: `req.originalUrl` where a framework keeps it (Express, which cuts
   * its mount path out of `req.url`), else `req.url`. Without it, the path
   * is `req.url`: relative to where a framework mounted the handler. The
   * chart page is served below it too (`/v1/`), and asks for `/v1/prices`.
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
  /**
   * Compression of the answers that can be large (`/prices`, UDF, exports,
   * reports, `/stats`, `/metrics`, the chart's script) in the coding the
   * request's `Accept-Encoding` asks for: brotli or gzip (zstd where Node
   * has it); `false` turns it off. On by default; a request without
   * `Accept-Encoding` gets the answer as it is. See {@link CompressionOptions}.
   */
  readonly compression?: boolean | CompressionOptions
  /** Lets web pages of other origins read (GET and HEAD, never writes): off by default. See {@link CorsOptions}. */
  readonly cors?: CorsOptions
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
 * `${basePath}/udf/` and the chart page at `${basePath}/`. Other
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
 * What it serves follows from the store's manifest (see `StoreSupports`),
 * read once here; metrics and the access log watch requests through hooks
 * (see `RequestHooks`), so routing knows nothing of them.
 *
 * @throws PriceStoreError `PRICE_INVALID_OPTIONS` for a bad `basePath` or limit
 * @example
 * const prices = createPricesHandler(store, { basePath: '/v1', maxConcurrentQueries: 2 })
 * app.use(prices)                                   // Express: /v1/prices
 * http.createServer((req, res) => prices(req, res)).listen(9000)
 */
export function createPricesHandler(store: PricesQueryable, options: PricesHandlerOptions = {}): PricesHandler {
  const gate = new QueryGate(options)
  const supports = supportsOf(store)
  const streamAbove = checkIntegerOption('streamAbove', options.streamAbove, DEFAULT_STREAM_ABOVE, 0, Number.MAX_SAFE_INTEGER)
  const compression = AnswerCompression.of(options.compression)
  const cors = CorsPolicy.of(options.cors)
  const send: SendOptions = {
    stallMs: checkIntegerOption('sendStallMs', options.sendStallMs, DEFAULT_SEND_STALL_MS, 1, MAX_TIMER_MS),
    onError: (err) => reportError(options, err),
    compression,
  }
  const pricesOptions = { ...options, streamAbove }
  const replication = checkReplicaOptions(options)
  const floor = new PositionFloor(store, replication, options)
  const counters = new LiveCounters()
  const metrics = options.metrics === true ? new HandlerMetrics({ store, supports, gate, counters, replica: replication.replica }) : undefined
  const hooks = createRequestHooks(metrics, options)
  const live = createLiveEndpoints(store, supports, options, { counters, metrics, replication })
  const table: RouteTable = { charts: supports.charts, basePath: checkBasePath(options.basePath), ...live.table, batch: servesBatch(store) }
  const page = new ChartPage(options, table.basePath)
  const openApi = new OpenApiDocument(options)
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
      const preflight = cors !== undefined && routed !== undefined && req.method === 'OPTIONS'
      const trace = hooks?.onRequest(req, res, arrivedAt, typeof target === 'string' ? target : '', preflight ? 'preflight' : endpointName(routed))
      if (cors !== undefined && routed !== undefined) {
        if (preflight) return answerPreflight(cors, req, res, typeof target === 'string' ? target : '', routed)
        if (isCorsRead(routed)) cors.allowRead(req, res)
      }
      if (routed !== undefined && readsAtPosition(routed)) {
        // "At least position P": checked before the query is admitted, so a read that waits holds no slot.
        const asked = floor.check(req, res, routed.params)
        if (asked !== undefined) {
          // Only a POST batch reads a body at a position: it stays unread (paused) while the read waits.
          const keepsBody = 'batch' in routed && req.method === 'POST' && !('status' in asked)
          if (!keepsBody) req.resume()
          if ('status' in asked) sendAnswer(res, floorAnswer(asked, 'udf' in routed), head)
          else afterFloor(asked, req, res, head, arrivedAt, routed, trace)
          return
        }
      }
      serve(req, res, head, arrivedAt, routed, trace)
    } catch (err) {
      failRequest(options, res, err, head)
    }
  }

  /** Answers an `OPTIONS` request on a served path when CORS is on: a preflight of a read is let through (see {@link CorsPolicy.preflight}). */
  const answerPreflight = (policy: CorsPolicy, req: IncomingMessage, res: ServerResponse, target: string, routed: Route): void => {
    req.resume()
    const asRead = routeRequest('GET', target, table)
    const allow = 'answer' in routed ? routed.answer.headers.allow : undefined
    const postRead = asRead !== undefined && 'batch' in asRead
    sendAnswer(res, policy.preflight(req, asRead !== undefined && isCorsRead(asRead), `${allow ?? 'GET, HEAD'}, OPTIONS`, postRead))
  }

  /** Serves a request once its position floor, if any, is reached; answers its refusal otherwise. */
  const afterFloor = (
    asked: Promise<FloorRefusal | undefined>, req: IncomingMessage, res: ServerResponse, head: boolean, arrivedAt: number, routed: Route, trace: RequestTrace | undefined,
  ): void => {
    asked.then(
      (refusal) => {
        if (refusal !== undefined) sendAnswer(res, floorAnswer(refusal, 'udf' in routed), head)
        else if (!res.destroyed) serve(req, res, head, arrivedAt, routed, trace)
      },
      (err: unknown) => failRequest(options, res, err, head),
    )
  }

  /** Serves a routed request (or answers 404 for one that is not ours, when there is no `next`). */
  const serve = (req: IncomingMessage, res: ServerResponse, head: boolean, arrivedAt: number, routed: Route | undefined, trace: RequestTrace | undefined): void => {
    try {
      if (routed !== undefined && 'live' in routed) {
        // The endpoint owns the request from here, its body included.
        live.serve(routed.live, { req, res, params: routed.params, head, arrivedAt, compression })
        return
      }
      if (routed !== undefined && 'batch' in routed) {
        // Reads its own body (POST), so before the drain below.
        answerBatch(gate, store as unknown as BatchSource, req, routed.params, pricesOptions, new HandlerRequest(arrivedAt, res, trace)).then(
          (answer) => sendOrFail(options, res, answer, head, send),
          (err: unknown) => failRequest(options, res, err, head),
        )
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
        sendAnswer(res, routed.page === 'html' ? page.page() : page.script(), head, compression)
        return
      }
      if ('document' in routed) {
        sendAnswer(res, openApi.answer(), head, compression)
        return
      }
      if ('udf' in routed) {
        const runHistory = historyThroughGate(gate, store, supports, options, new HandlerRequest(arrivedAt, res, trace))
        answerUdf(store as unknown as UdfSource, routed.udf, routed.params, { ...options, runHistory }).then(
          (ready) => sendOrFail(options, res, ready, head, send),
          (err: unknown) => failRequest(options, res, err, head),
        )
        return
      }
      // No async function and no named closure per request (tsx names each with a
      // defineProperty call): at thousands of requests a second, each shows in the profile.
      answerThroughGate(gate, store, supports, routed.params, pricesOptions, new HandlerRequest(arrivedAt, res, trace)).then(
        (answer) => sendOrFail(options, res, answer, head, send),
        (err: unknown) => failRequest(options, res, err, head),
      )
    } catch (err) {
      failRequest(options, res, err, head)
    }
  }
  return Object.assign(handler, { queries: () => gate.load(), close: () => live.close() })
}

/**
 * Whether a route reads the store's data, so a `minPosition` floor applies
 * to it: `/prices`, `/udf/symbols`, `/udf/search`, `/udf/history`,
 * `/prices/export`, `/stats`, `/prices/quality` and `/prices/verify`. The live stream has its own positions
 * (`Last-Event-ID`); health, metrics, the UDF configuration and clock, the
 * chart page and writes read no data.
 */
function readsAtPosition(routed: Route): routed is Extract<Route, { readonly params: URLSearchParams }> {
  if ('live' in routed) return routed.live === 'export' || routed.live === 'stats' || routed.live === 'quality' || routed.live === 'verify'
  if ('udf' in routed) return routed.udf !== 'config' && routed.udf !== 'time'
  return 'params' in routed
}

/**
 * Whether a route is a read that CORS opens to other origins (when on):
 * `/prices`, the UDF endpoints, the live stream, exports, `/stats`,
 * `/health`, the reports and the OpenAPI document. Writes, the admin
 * endpoints, `/metrics` (the operator's) and the chart page (same origin) are not.
 */
function isCorsRead(routed: Route): boolean {
  if ('live' in routed) return CORS_LIVE_READS.has(routed.live)
  return 'params' in routed || 'document' in routed
}

const CORS_LIVE_READS: ReadonlySet<string> = new Set(['stream', 'export', 'stats', 'health', 'quality', 'verify'])

/** What the gate needs to know about one request: when it came, and (only if its query must wait) when its client leaves. */
class HandlerRequest implements PricesRequest {
  constructor(
    readonly arrivedAt: number,
    readonly res: ServerResponse,
    readonly trace: RequestTrace | undefined,
  ) {}

  /** Tells the request's observation (metrics, access log) its query's plan. */
  planned(plan: QueryPlan): void {
    this.trace?.planned(plan)
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
