import type { IncomingMessage, ServerResponse } from 'node:http'
import { performance } from 'node:perf_hooks'
import { MAX_TIMER_MS, checkIntegerOption } from '../../rules/options.js'
import { ReadAccess, Reader, admitReader } from './access/read-access.js'
import type { ReadKeysOptions } from './access/read-keys.js'
import { QueryGate } from './admission/query-gate.js'
import type { QueryLimitOptions, QueryLoad } from './admission/query-limits.js'
import { storeMeets, supportsOf } from './capabilities.js'
import { AnswerCompression, type CompressionOptions } from './core/compression.js'
import { CorsPolicy, type CorsOptions } from './core/cors.js'
import { failRequest, sendAnswer } from './core/send.js'
import { DEFAULT_SEND_STALL_MS, type StreamSendOptions as SendOptions } from './core/streamed-body.js'
import { LiveCounters } from './live/endpoint.js'
import type { LiveEndpointOptions } from './live/live-endpoints.js'
import type { OpenApiOptions } from './live/openapi-endpoint.js'
import { PositionFloor, floorAnswer, type FloorRefusal } from './live/min-position.js'
import { checkReplicaOptions } from './live/replica.js'
import { HandlerMetrics } from './observe/metrics.js'
import { createRequestHooks, type RequestTrace } from './observe/request-observer.js'
import { reportError } from './core/answer.js'
import type { AnswerOptions, PricesQueryable } from './prices/answer.js'
import { ROUTES, type RouteParts, type RouteRow, type RouteServer } from './route-table.js'
import { checkBasePath, endpointName, notFoundAnswer, routeRequest, servedRoutes, type Route as AnyRoute } from './routes.js'
import type { ChartPageOptions } from './udf/chart-page.js'

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
  /**
   * Read keys: each reader's budgets (requests and query cost per window),
   * delay, symbols and fields, and whether readers without a key may read
   * (see {@link ReadKeysOptions}; docs/http.md, "Read keys"). Default none:
   * reads are open and admitted by the query gate alone.
   */
  readonly readKeys?: ReadKeysOptions
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
  return createRoutedHandler(store, options, ROUTES)
}

/**
 * {@link createPricesHandler} serving the rows of `table` that the store and
 * the options allow: a row is served when the store meets what it needs
 * and its server is built.
 */
export function createRoutedHandler(store: PricesQueryable, options: PricesHandlerOptions, table: readonly RouteRow[]): PricesHandler {
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
  const replication = checkReplicaOptions(options)
  const floor = new PositionFloor(store, replication, options)
  const access = options.readKeys === undefined ? undefined : ReadAccess.of(options.readKeys)
  const counters = new LiveCounters()
  const metrics = options.metrics === true ? new HandlerMetrics({ store, supports, gate, counters, replica: replication.replica, access }) : undefined
  const hooks = createRequestHooks(metrics, options)
  const closers: (() => Promise<void>)[] = []
  const basePath = checkBasePath(options.basePath)
  const parts: RouteParts = { store, supports, options, counters, metrics, replication, closers, basePath, gate, pricesOptions: { ...options, streamAbove }, send }
  const servers = new Map<RouteRow, RouteServer>()
  for (const row of table) {
    const server = storeMeets(row.needs, supports) ? row.open(parts) : undefined
    if (server !== undefined) servers.set(row, server)
  }
  const routes = servedRoutes(table, (row) => servers.has(row), basePath)
  // With a prefix, the whole path: Express keeps it in originalUrl once it has cut its mount path from url.
  const targetOf =
    basePath === '' ? (req: IncomingMessage) => req.url ?? '' : (req: IncomingMessage) => (req as { originalUrl?: unknown }).originalUrl ?? req.url ?? ''
  const handler = (req: IncomingMessage, res: ServerResponse, next?: NextHandler): void => {
    const head = req.method === 'HEAD'
    try {
      const arrivedAt = performance.now()
      const target = targetOf(req)
      const routed = routeRequest(req.method, typeof target === 'string' ? target : '', routes)
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
      let reader: Reader | undefined
      if (access !== undefined && routed !== undefined && 'row' in routed && routed.row.readers !== undefined) {
        const admitted = admitReader(access, routed.row.readers, req, routed.row.paths[0] as string)
        if (!(admitted instanceof Reader)) {
          req.resume()
          sendAnswer(res, admitted, head)
          return
        }
        reader = admitted
        trace?.readBy(reader.id)
      }
      if (routed !== undefined && 'row' in routed && routed.row.floor !== undefined) {
        // "At least position P": checked before the query is admitted, so a read that waits holds no slot.
        const asked = floor.check(req, res, routed.params)
        if (asked !== undefined) {
          // Only a read by POST (a batch) reads a body at a position: it stays unread (paused) while the read waits.
          const keepsBody = req.method === 'POST' && !('status' in asked)
          if (!keepsBody) req.resume()
          if ('status' in asked) sendAnswer(res, floorAnswer(asked, routed.row.floor === 'udf'), head)
          else afterFloor(asked, req, res, head, arrivedAt, routed, trace, reader)
          return
        }
      }
      serve(req, res, head, arrivedAt, routed, trace, reader)
    } catch (err) {
      failRequest(options, res, err, head)
    }
  }

  /** Answers an `OPTIONS` request on a served path when CORS is on: a preflight of a read is let through (see {@link CorsPolicy.preflight}). */
  const answerPreflight = (policy: CorsPolicy, req: IncomingMessage, res: ServerResponse, target: string, routed: Route): void => {
    req.resume()
    const asRead = routeRequest('GET', target, routes)
    const allow = 'answer' in routed ? routed.answer.headers.allow : undefined
    const read = asRead !== undefined && isCorsRead(asRead)
    // A read that also takes POST (a batch with its list in a JSON body).
    const postRead = read && 'row' in asRead && asRead.row.methods.includes('POST')
    sendAnswer(res, policy.preflight(req, read, `${allow ?? 'GET, HEAD'}, OPTIONS`, postRead))
  }

  /** Serves a request once its position floor, if any, is reached; answers its refusal otherwise. */
  const afterFloor = (
    asked: Promise<FloorRefusal | undefined>, req: IncomingMessage, res: ServerResponse, head: boolean, arrivedAt: number, routed: RowRoute,
    trace: RequestTrace | undefined, reader: Reader | undefined,
  ): void => {
    asked.then(
      (refusal) => {
        if (refusal !== undefined) sendAnswer(res, floorAnswer(refusal, routed.row.floor === 'udf'), head)
        else if (!res.destroyed) serve(req, res, head, arrivedAt, routed, trace, reader)
      },
      (err: unknown) => failRequest(options, res, err, head),
    )
  }

  /** Serves a routed request (or answers 404 for one that is not ours, when there is no `next`). */
  const serve = (
    req: IncomingMessage, res: ServerResponse, head: boolean, arrivedAt: number, routed: Route | undefined, trace: RequestTrace | undefined, reader?: Reader,
  ): void => {
    try {
      if (routed !== undefined && 'row' in routed) {
        // The row's server owns the request from here, its body included.
        servers.get(routed.row)?.({ req, res, params: routed.params, head, arrivedAt, compression, trace, reader })
        return
      }
      // Bodies mean nothing here; draining them keeps a keep-alive connection usable.
      req.resume()
      sendAnswer(res, routed === undefined ? notFoundAnswer(routes) : routed.answer, head)
    } catch (err) {
      failRequest(options, res, err, head)
    }
  }
  return Object.assign(handler, { queries: () => gate.load(), close: async () => void (await Promise.all(closers.map((close) => close()))) })
}

type Route = AnyRoute<RouteRow>
type RowRoute = Extract<Route, { readonly row: RouteRow }>

/** Whether a route is a read that CORS opens to other origins (when on): see `RouteRow.cors`. */
function isCorsRead(routed: Route): boolean {
  return 'row' in routed && routed.row.cors === 'read'
}
