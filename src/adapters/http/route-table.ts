import type { ServerResponse } from 'node:http'
import type { QueryPlan } from '../../engine/query-plan.js'
import type { Reader } from './access/read-access.js'
import { forbiddenSymbol } from './access/reader-request.js'
import type { QueryGate } from './admission/query-gate.js'
import type { EndpointNeed } from './capabilities.js'
import type { ErrorReportOptions } from './core/answer.js'
import { failRequest, sendAnswer, sendOrFail } from './core/send.js'
import type { StreamSendOptions } from './core/streamed-body.js'
import type { LiveRequest } from './live/endpoint.js'
import * as live from './live/live-endpoints.js'
import { OpenApiDocument, type OpenApiOptions } from './live/openapi-endpoint.js'
import type { RequestTrace } from './observe/request-observer.js'
import type { AnswerOptions, PricesQueryable } from './prices/answer.js'
import { answerBatch, type BatchSource } from './prices/batch-endpoint.js'
import { answerThroughGate, type PricesRequest } from './prices/through-gate.js'
import { OPENAPI_PATH, type RouteMethod, type RoutedRow } from './routes.js'
import { CHART_SCRIPT_PATH, ChartPage, type ChartPageOptions } from './udf/chart-page.js'
import { historyThroughGate } from './udf/udf-gate.js'
import { scopedHistorySource } from './udf/udf-history.js'
import { answerUdf, type UdfEndpoint, type UdfSource } from './udf/udf.js'

/*
 * Every HTTP endpoint, one row each: routing, 405s and their `allow`, the
 * 404's list, CORS, the minimum-position floor, metrics' endpoint names and
 * the OpenAPI check (test/http) all read these rows, so an endpoint is added
 * by adding its row.
 */

/** One HTTP endpoint: what routing reads (its name, the chart page and its script sharing `page`; paths; methods; refusal), and the rest. */
export interface RouteRow extends RoutedRow {
  /** What it needs beyond a store with `query` (see `storeMeets`); none: every handler serves it. */
  readonly needs?: EndpointNeed
  /** `read`: opened to pages of other origins when CORS is on; `closed`: never (writes, admin, the operator's, same-origin pages). */
  readonly cors: 'read' | 'closed'
  /** It reads the store's data, so a `minPosition` floor applies, refused in this error shape; none: no floor. */
  readonly floor?: 'json' | 'udf'
  /**
   * How read keys meter it (when the server has them): `scoped` answers
   * within a reader's scope (its delay, symbols and fields); `catalogue`
   * tells of symbols, not records, to any reader; `whole` answers from every
   * record, so a reader with a scope is refused 403. None: not metered (health,
   * the OpenAPI document, the chart page, writes and the operator's endpoints).
   */
  readonly readers?: 'scoped' | 'catalogue' | 'whole'
  /** Its `operationId`s in docs/openapi.yaml (each under one of its paths, with one of its methods). */
  readonly operations: readonly string[]
  /** Builds its server for one handler, or declines (`undefined`) when the options do not ask for it. */
  readonly open: (parts: RouteParts) => RouteServer | undefined
}

/** The options every row's server may read: the handler's. */
export interface RouteOptions extends AnswerOptions, ChartPageOptions, live.LiveEndpointOptions, OpenApiOptions, ErrorReportOptions {}

/** What a row's server is built from, once per handler. */
export interface RouteParts extends live.LiveParts {
  readonly store: PricesQueryable
  readonly options: RouteOptions
  /** The handler's base path, as routing compares it. */
  readonly basePath: string
  readonly gate: QueryGate
  /** The options of `/prices` and batch answers (the handler's, with `streamAbove` checked). */
  readonly pricesOptions: AnswerOptions & { readonly streamAbove: number }
  readonly send: StreamSendOptions
}

/** One request routed to a row. */
export interface RoutedRequest extends LiveRequest {
  readonly trace: RequestTrace | undefined
}

/**
 * Answers one request. It owns the request from here, its body included
 * (read, or drained so a keep-alive connection stays usable), and may throw
 * only before it has answered.
 */
export type RouteServer = (request: RoutedRequest) => void

const READ: readonly RouteMethod[] = ['GET', 'HEAD']
const PRICES_PATHS = ['/prices', '/prices/']

/** The endpoints, in the order their servers are built (options are checked in that order) and `allow` lists methods. */
export const ROUTES: readonly RouteRow[] = [
  { endpoint: 'prices', paths: PRICES_PATHS, methods: READ, cors: 'read', readers: 'scoped', floor: 'json', operations: ['getPrices', 'headPrices'], open: pricesServer },
  {
    endpoint: 'write', paths: PRICES_PATHS, methods: ['POST'], needs: 'writeToken', cors: 'closed', operations: ['postPrices'],
    refusal: 'this server takes no writes (it was started without a write token)', open: live.openWrite,
  },
  { endpoint: 'stream', paths: ['/prices/stream'], methods: READ, needs: 'watch', cors: 'read', readers: 'scoped', operations: ['streamPrices', 'headPricesStream'], open: live.openStream },
  { endpoint: 'export', paths: ['/prices/export'], methods: READ, needs: 'export', cors: 'read', readers: 'scoped', floor: 'json', operations: ['exportPrices', 'headExportPrices'], open: live.openExport },
  { endpoint: 'stats', paths: ['/stats'], methods: READ, needs: 'stats', cors: 'read', readers: 'whole', floor: 'json', operations: ['getStats'], open: live.openStats },
  { endpoint: 'feeds', paths: ['/feeds'], methods: READ, needs: 'feeds', cors: 'read', readers: 'whole', floor: 'json', operations: ['getFeeds'], open: live.openFeeds },
  { endpoint: 'quality', paths: ['/prices/quality'], methods: READ, needs: 'quality', cors: 'read', readers: 'whole', floor: 'json', operations: ['getQuality'], open: live.openQuality },
  { endpoint: 'verify', paths: ['/prices/verify'], methods: READ, needs: 'verify', cors: 'read', readers: 'whole', floor: 'json', operations: ['getVerify'], open: live.openVerify },
  { endpoint: 'health', paths: ['/health'], methods: READ, cors: 'read', operations: ['getHealth'], open: live.openHealth },
  { endpoint: 'metrics', paths: ['/metrics'], methods: READ, needs: 'metrics', cors: 'closed', operations: ['getMetrics'], open: live.openMetrics },
  // The one route that takes POST only: it changes the server's disk.
  { endpoint: 'backup', paths: ['/admin/backup'], methods: ['POST'], needs: 'backupDir', cors: 'closed', operations: ['postBackup'], open: live.openBackup },
  // A read that may carry its batch as a JSON body: its POST needs no write token.
  {
    endpoint: 'batch', paths: ['/prices/batch'], methods: ['GET', 'HEAD', 'POST'], needs: 'batch', cors: 'read', readers: 'scoped', floor: 'json',
    operations: ['getBatch', 'headBatch', 'postBatch'], open: batchServer,
  },
  udfRow('config', 'getUdfConfig'),
  udfRow('symbols', 'getUdfSymbol', 'udf'),
  udfRow('search', 'searchUdfSymbols', 'udf'),
  udfRow('history', 'getUdfHistory', 'udf'),
  udfRow('time', 'getUdfTime'),
  // The page is told the prefix: its script is loaded from below it, and asks for /prices and /udf/ there.
  { endpoint: 'page', paths: ['/'], methods: READ, needs: 'charts', cors: 'closed', operations: ['getChartPage'], open: (parts) => pageServer(parts, 'page') },
  { endpoint: 'page', paths: [CHART_SCRIPT_PATH], methods: READ, needs: 'charts', cors: 'closed', operations: ['getChartScript'], open: (parts) => pageServer(parts, 'script') },
  { endpoint: 'openapi', paths: [OPENAPI_PATH], methods: READ, cors: 'read', operations: ['getOpenApiDocument'], open: documentServer },
]

/** A row of TradingView's UDF protocol under `/udf/`; `floor` for those that read the store's records. */
function udfRow(name: UdfEndpoint, operation: string, floor?: 'udf'): RouteRow {
  const readers = name === 'history' ? 'scoped' : 'catalogue'
  const row = { endpoint: `udf_${name}`, paths: [`/udf/${name}`], methods: READ, needs: 'charts', cors: 'read', readers, operations: [operation] } as const
  return { ...row, ...(floor === undefined ? {} : { floor }), open: (parts) => udfServer(parts, name) }
}

/*
 * No async function and no named closure per request (tsx names each with a
 * defineProperty call): at thousands of requests a second, each shows in the profile.
 */

function pricesServer(parts: RouteParts): RouteServer {
  const { gate, store, supports, pricesOptions, options, send } = parts
  return ({ req, res, params, head, arrivedAt, trace, reader }) => {
    req.resume() // bodies mean nothing here; draining them keeps a keep-alive connection usable
    answerThroughGate(gate, store, supports, params, pricesOptions, new GateRequest(arrivedAt, res, trace, reader)).then(
      (answer) => sendOrFail(options, res, answer, head, send),
      (err: unknown) => failRequest(options, res, err, head),
    )
  }
}

function batchServer(parts: RouteParts): RouteServer {
  const { gate, store, pricesOptions, options, send } = parts
  return ({ req, res, params, head, arrivedAt, trace, reader }) => {
    // Reads its own body (POST).
    answerBatch(gate, store as unknown as BatchSource, req, params, pricesOptions, new GateRequest(arrivedAt, res, trace, reader)).then(
      (answer) => sendOrFail(options, res, answer, head, send),
      (err: unknown) => failRequest(options, res, err, head),
    )
  }
}

function udfServer(parts: RouteParts, endpoint: UdfEndpoint): RouteServer {
  const { gate, store, supports, options, send } = parts
  return ({ req, res, params, head, arrivedAt, trace, reader }) => {
    req.resume()
    const refused = endpoint === 'history' ? forbiddenSymbol(reader, params.getAll('symbol')) : undefined
    if (refused !== undefined) return sendAnswer(res, refused, head)
    const runHistory = historyThroughGate(gate, store, supports, options, new GateRequest(arrivedAt, res, trace, reader))
    const udf = store as unknown as UdfSource
    const scope = endpoint === 'history' ? reader?.scope() : undefined
    // Reads of history go through the reader's scope; the history plan needs the store's limits alone besides.
    const source: UdfSource = scope === undefined ? udf : ({ ...scopedHistorySource(udf, scope), limits: udf.limits } as unknown as UdfSource)
    answerUdf(source, endpoint, params, { ...options, runHistory }).then(
      (ready) => sendOrFail(options, res, ready, head, send),
      (err: unknown) => failRequest(options, res, err, head),
    )
  }
}

function pageServer(parts: RouteParts, which: 'page' | 'script'): RouteServer {
  const page = new ChartPage(parts.options, parts.basePath)
  return ({ req, res, head, compression }) => {
    req.resume()
    sendAnswer(res, which === 'page' ? page.page() : page.script(), head, compression)
  }
}

function documentServer(parts: RouteParts): RouteServer {
  const document = new OpenApiDocument(parts.options)
  return ({ req, res, head, compression }) => {
    req.resume()
    sendAnswer(res, document.answer(), head, compression)
  }
}

/** What the gate needs to know about one request: when it came, and (only if its query must wait) when its client leaves. */
class GateRequest implements PricesRequest {
  constructor(
    readonly arrivedAt: number,
    readonly res: ServerResponse,
    readonly trace: RequestTrace | undefined,
    readonly reader: Reader | undefined,
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
