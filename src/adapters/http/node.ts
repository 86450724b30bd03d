import { STATUS_CODES, createServer } from 'node:http'
import type { IncomingMessage, RequestListener, Server, ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { performance } from 'node:perf_hooks'
import type { Duplex } from 'node:stream'
import {
  httpErrorAnswer,
  reportError,
  type AnswerOptions,
  type HttpAnswer,
  type HttpErrorCode,
  type PricesQueryable,
} from './answer.js'
import { CHART_SCRIPT_PATH, ChartPage, type ChartPageOptions } from './chart-page.js'
import { MAX_TIMER_MS, QueryGate, checkIntegerOption, type GateRequest, type QueryLimitOptions, type QueryLoad } from './query-gate.js'
import { answerUdf, udfEndpoint, type UdfEndpoint, type UdfSource } from './udf.js'
import { historyThroughGate } from './udf-gate.js'

/**
 * Options of {@link createPricesListener}: `onError` for logging what clients
 * are not shown, the limits on queries (a cap on heavy queries at once,
 * a bounded line of waiting ones, a time budget per query; see
 * {@link QueryLimitOptions}), and where the chart page's script is.
 */
export interface PricesListenerOptions extends AnswerOptions, QueryLimitOptions, ChartPageOptions {}

const ALLOW = 'GET, HEAD'

/**
 * A `node:http` request listener serving `GET`/`HEAD /prices` (and `/prices/`)
 * from `store` and, when the store can also answer candles (a `PriceStore`
 * can; see {@link UdfSource}), TradingView's UDF endpoints under `/udf/` and
 * a chart page at `/`. Mount it in any Node host; every other path answers
 * 404 and every other method on those paths answers 405 with
 * `Allow: GET, HEAD`. It never throws: unexpected failures become a 500
 * without internals. Heavy queries (UDF history included) are capped, wait
 * in a bounded line, and every query has a time budget (503 `HTTP_BUSY` /
 * `HTTP_QUERY_TIMEOUT` past them; see {@link QueryLimitOptions}); each
 * listener has its own limits.
 *
 * @example
 * http.createServer(createPricesListener(store)).listen(9000)
 */
export function createPricesListener(store: PricesQueryable, options: PricesListenerOptions = {}): RequestListener {
  return listenerWithGate(store, options, new QueryGate(options))
}

function listenerWithGate(store: PricesQueryable, options: PricesListenerOptions, gate: QueryGate): RequestListener {
  const charts = chartSource(store)
  const page = new ChartPage(options)
  return (req, res) => {
    const head = req.method === 'HEAD'
    try {
      const arrivedAt = performance.now()
      // Bodies mean nothing here; draining them keeps a keep-alive connection usable.
      req.resume()
      const routed = routeRequest(req.method, req.url ?? '', charts !== undefined)
      if ('answer' in routed) {
        sendAnswer(res, routed.answer, head)
        return
      }
      if ('page' in routed) {
        sendAnswer(res, routed.page === 'html' ? page.page() : page.script(), head)
        return
      }
      if ('udf' in routed) {
        const runHistory = historyThroughGate(gate, store, options, new ListenerRequest(arrivedAt, res))
        answerUdf(charts as UdfSource, routed.udf, routed.params, { ...options, runHistory }).then(
          (ready) => sendOrFail(options, res, ready, head),
          (err: unknown) => failRequest(options, res, err, head),
        )
        return
      }
      // No async function and no named closure per request (tsx names each with a
      // defineProperty call): at thousands of requests a second, each shows in the profile.
      gate.answer(store, routed.params, options, new ListenerRequest(arrivedAt, res)).then(
        (answer) => sendOrFail(options, res, answer, head),
        (err: unknown) => failRequest(options, res, err, head),
      )
    } catch (err) {
      failRequest(options, res, err, head)
    }
  }
}

/** What the gate needs to know about one request: when it came, and (only if its query must wait) when its client leaves. */
class ListenerRequest implements GateRequest {
  constructor(
    readonly arrivedAt: number,
    readonly res: ServerResponse,
  ) {}

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

function sendOrFail(options: PricesListenerOptions, res: ServerResponse, answer: HttpAnswer, head: boolean): void {
  try {
    sendAnswer(res, answer, head)
  } catch (err) {
    failRequest(options, res, err, head)
  }
}

/** Something unexpected broke: log it, and answer 500 without internals if nothing is out yet. */
function failRequest(options: PricesListenerOptions, res: ServerResponse, err: unknown, head: boolean): void {
  reportError(options, err)
  try {
    if (res.headersSent) throw err // half an answer is out: only closing the connection is honest
    sendAnswer(res, httpErrorAnswer(500, 'HTTP_INTERNAL_ERROR', 'internal error while answering the request'), head)
  } catch {
    res.destroy()
  }
}

/** Where a request goes (see {@link routeRequest}). */
type Route =
  | { readonly answer: HttpAnswer }
  | { readonly params: URLSearchParams }
  | { readonly udf: UdfEndpoint; readonly params: URLSearchParams }
  | { readonly page: 'html' | 'script' }

/**
 * Where a request goes: a query on `/prices`, a UDF endpoint or the chart
 * page and its script (those only when `charts` are served), each for GET
 * or HEAD; or a ready answer (404 for other paths, 405 for other methods).
 */
function routeRequest(method: string | undefined, url: string, charts: boolean): Route {
  const target = splitTarget(url)
  const path = target?.path
  const prices = path === '/prices' || path === '/prices/'
  const udf = charts && path !== undefined ? udfEndpoint(path) : undefined
  const page = charts && path === '/' ? 'html' : charts && path === CHART_SCRIPT_PATH ? 'script' : undefined
  if (target === undefined || (!prices && udf === undefined && page === undefined)) {
    const served = charts ? 'GET /prices, /udf/{config,symbols,search,history,time} and the chart page at /' : 'GET /prices'
    return { answer: httpError(404, 'HTTP_NOT_FOUND', `not found: the endpoints are ${served}`) }
  }
  if (method !== 'GET' && method !== 'HEAD') {
    const message = `method ${JSON.stringify(method)} is not allowed on ${target.path}; use GET or HEAD`
    return { answer: httpError(405, 'HTTP_METHOD_NOT_ALLOWED', message, { allow: ALLOW }) }
  }
  if (page !== undefined) return { page }
  // SPEC §2: decoded exactly as URLSearchParams does (malformed escapes stay as text).
  const params = new URLSearchParams(target.query)
  return udf === undefined ? { params } : { udf, params }
}

/**
 * The store as a source of charts, when it is one. Checked once per
 * listener: a host may serve `/prices` from anything with `query` (a stub,
 * a proxy); charts need candles, symbols and the latest records too.
 */
function chartSource(store: PricesQueryable): UdfSource | undefined {
  const candidate = store as Partial<UdfSource>
  const methods = [candidate.candles, candidate.symbols, candidate.latest]
  const charts = methods.every((method) => typeof method === 'function') && candidate.limits !== undefined && candidate.provider !== undefined
  return charts ? (store as unknown as UdfSource) : undefined
}

/**
 * Splits a request target into its raw path and raw query. Origin-form
 * (`/prices?x`) is the usual case; absolute-form (`http://host/prices?x`)
 * must be accepted too (RFC 9112 §3.2.2). Anything else (`*`, garbage) has
 * no path. The path is compared undecoded, so `//prices` is not `/prices`.
 */
function splitTarget(url: string): { path: string; query: string } | undefined {
  let rest = url
  if (!rest.startsWith('/')) {
    const authority = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i.exec(rest)
    if (authority === null) return undefined
    rest = rest.slice(authority[0].length)
    if (!rest.startsWith('/')) rest = `/${rest}`
  }
  const hash = rest.indexOf('#')
  if (hash >= 0) rest = rest.slice(0, hash)
  const question = rest.indexOf('?')
  if (question < 0) return { path: rest, query: '' }
  return { path: rest.slice(0, question), query: rest.slice(question + 1) }
}

function httpError(
  status: number,
  code: HttpErrorCode,
  message: string,
  headers: Readonly<Record<string, string>> = {},
): HttpAnswer {
  return httpErrorAnswer(status, code, message, headers)
}

function sendAnswer(res: ServerResponse, answer: HttpAnswer, head: boolean): void {
  // The client may have gone while the query ran; there is no one to answer.
  if (res.destroyed || res.writableEnded) return
  res.writeHead(answer.status, answer.headers)
  // HEAD: the headers GET would send, content-length included, and no body.
  if (head) res.end()
  else res.end(answer.body)
}

// Node's parser errors and what Node itself would answer, but with our JSON body.
const CLIENT_ERRORS: Readonly<Record<string, readonly [number, HttpErrorCode, string]>> = {
  HPE_HEADER_OVERFLOW: [431, 'HTTP_HEADERS_TOO_LARGE', 'the request line and headers are too large'],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'HTTP_REQUEST_TIMEOUT', 'the request took too long to arrive'],
}

/**
 * A `clientError` handler for `node:http` servers: answers a request Node
 * could not parse (431 for an oversized request line or headers, 408 for a
 * timeout, 400 otherwise) with the usual JSON error body, then closes the
 * connection. Only closes a connection that is gone or already sending an answer.
 */
export function answerClientError(err: Error & { code?: string }, socket: Duplex): void {
  // Node's own handler makes the same check on this (undocumented, long-stable)
  // field: an answer already under way on a keep-alive connection must not be
  // corrupted by a second one.
  const inFlight = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } | null })._httpMessage
  if (err.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent === true) {
    socket.destroy()
    return
  }
  const [status, code, message] = CLIENT_ERRORS[err.code ?? ''] ?? [400, 'HTTP_BAD_REQUEST', 'malformed HTTP request']
  writeRawAnswer(socket, httpError(status, code, message))
}

/**
 * A `connect` handler for `node:http` servers. Without one, Node drops
 * `CONNECT` requests without a word; this answers them like any other
 * method (405 on the paths served, 404 elsewhere) and closes the connection.
 */
export function answerConnect(req: IncomingMessage, socket: Duplex): void {
  const routed = routeRequest(req.method, req.url ?? '', true)
  if ('answer' in routed) writeRawAnswer(socket, routed.answer)
  else socket.destroy()
}

/** Writes a whole HTTP/1.1 answer on a bare socket, then closes it once flushed. */
function writeRawAnswer(socket: Duplex, answer: HttpAnswer): void {
  const headers = Object.entries({ ...answer.headers, connection: 'close' })
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('')
  socket.once('finish', () => socket.destroy())
  socket.end(`HTTP/1.1 ${answer.status} ${STATUS_CODES[answer.status] ?? ''}\r\n${headers}\r\n${answer.body}`)
}

/** Options of {@link startServer}. */
export interface StartServerOptions extends PricesListenerOptions {
  readonly store: PricesQueryable
  /** Interface to listen on (default `127.0.0.1`). */
  readonly host?: string
  /** Port (default 0: any free port; read the chosen one from `url`). */
  readonly port?: number
  /** How long `close()` lets in-flight requests finish before cutting connections (ms, default 10000). */
  readonly graceMs?: number
  /** Largest request line plus headers in bytes (default Node's, 16 KiB); larger gets 431. */
  readonly maxHeaderSize?: number
  /**
   * Time a client has to send the request line and headers (ms, default
   * {@link DEFAULT_HEADERS_TIMEOUT_MS}); then it gets 408 and the connection is closed.
   * At most `requestTimeoutMs` when that is not 0.
   */
  readonly headersTimeoutMs?: number
  /**
   * Time a client has to send the whole request, body included (ms, default
   * {@link DEFAULT_REQUEST_TIMEOUT_MS}; 0 means none); then it gets 408 and the
   * connection is closed. The query's own budget is `queryTimeoutMs`.
   */
  readonly requestTimeoutMs?: number
}

/** Default time to receive the request line and headers (ms). Node's own is 60 s. */
export const DEFAULT_HEADERS_TIMEOUT_MS = 10_000
/** Default time to receive a whole request (ms). Node's own is 300 s. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000

/** A listening server made by {@link startServer}. */
export interface RunningServer {
  /** Base URL, e.g. `http://127.0.0.1:9000`; the endpoint is `${url}/prices`. */
  readonly url: string
  readonly server: Server
  /** The query gate's load now (heavy queries running and waiting) and its counts of refused and timed-out queries. */
  queries(): QueryLoad
  /**
   * Graceful stop: stops accepting connections, closes idle keep-alive
   * connections, lets in-flight requests finish (each then closes its
   * connection), and resolves once all are done. Idempotent.
   */
  close(): Promise<void>
}

/**
 * Starts a `node:http` server for {@link createPricesListener} and resolves
 * once it listens. Rejects with the listen error (e.g. `EADDRINUSE`).
 *
 * @example
 * const running = await startServer({ store, port: 9000 })
 * console.log(`${running.url}/prices?symbol=BTC`)
 * await running.close()
 */
export async function startServer(options: StartServerOptions): Promise<RunningServer> {
  const { store, host = '127.0.0.1', port = 0, graceMs = 10_000 } = options
  const requestTimeout = checkIntegerOption('requestTimeoutMs', options.requestTimeoutMs, DEFAULT_REQUEST_TIMEOUT_MS, 0, MAX_TIMER_MS)
  const headersTimeout = checkIntegerOption(
    'headersTimeoutMs',
    options.headersTimeoutMs,
    Math.min(DEFAULT_HEADERS_TIMEOUT_MS, requestTimeout === 0 ? DEFAULT_HEADERS_TIMEOUT_MS : requestTimeout),
    1,
    requestTimeout === 0 ? MAX_TIMER_MS : requestTimeout,
  )
  const gate = new QueryGate(options)
  const listener = listenerWithGate(store, options, gate)
  let closing = false
  const server = createServer(
    {
      ...(options.maxHeaderSize === undefined ? {} : { maxHeaderSize: options.maxHeaderSize }),
      headersTimeout,
      requestTimeout,
      // Node checks both timeouts on this period (30 s by default), so a
      // stalled request would otherwise live up to 30 s past its timeout.
      connectionsCheckingInterval: Math.max(10, Math.min(1_000, Math.floor(headersTimeout / 4))),
      // Node would answer a missing Host with an empty 400; the listener below answers it as JSON.
      requireHostHeader: false,
    },
    (req, res) => {
      // Once closing, each answer ends its connection so close() can complete.
      if (closing) res.setHeader('connection', 'close')
      if (req.httpVersion === '1.1' && req.headers.host === undefined) {
        // RFC 9112 §3.2: a server MUST answer 400 to an HTTP/1.1 request without Host.
        req.resume()
        res.setHeader('connection', 'close')
        sendAnswer(res, httpError(400, 'HTTP_BAD_REQUEST', 'malformed HTTP request: an HTTP/1.1 request needs a Host header'), req.method === 'HEAD')
        return
      }
      listener(req, res)
    },
  )
  // A client's FIN means it is gone (Node's default, as in nginx): its
  // queries still waiting for a slot are dropped, unanswered. So a client
  // that half-closes right after its request (`nc -N`) may get no answer.
  server.on('clientError', answerClientError)
  server.on('connect', answerConnect)
  // `Expect` other than 100-continue: Node would answer an empty 417. RFC 9110
  // §10.1.1 allows ignoring it; the request is answered like any other.
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => server.emit('request', req, res))

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => {
      server.off('error', reject)
      resolve()
    })
  })

  const address = server.address() as AddressInfo
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address
  let closed: Promise<void> | undefined
  return {
    url: `http://${shownHost}:${address.port}`,
    server,
    queries: () => gate.load(),
    close() {
      closed ??= new Promise<void>((resolve, reject) => {
        closing = true
        const cut = setTimeout(() => server.closeAllConnections(), graceMs)
        cut.unref()
        server.close((err) => {
          clearTimeout(cut)
          if (err) reject(err)
          else resolve()
        })
        server.closeIdleConnections()
      })
      return closed
    },
  }
}
