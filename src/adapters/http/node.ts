import { STATUS_CODES, createServer } from 'node:http'
import type { IncomingMessage, RequestListener, Server, ServerResponse } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import type { Duplex } from 'node:stream'
import { MAX_TIMER_MS, checkIntegerOption } from '../../rules/options.js'
import type { QueryLoad } from './admission/query-limits.js'
import { httpErrorAnswer, reportError, type HttpAnswer, type HttpErrorCode } from './core/answer.js'
import { sendAnswer } from './core/send.js'
import { createPricesHandler, type PricesHandlerOptions } from './handler.js'
import type { PricesQueryable } from './prices/answer.js'
import { ROUTES } from './route-table.js'
import { notFoundAnswer, routeRequest, servedRoutes } from './routes.js'
import { createWsEndpoint } from './ws/ws-endpoint.js'
import type { WebSocketOptions } from './ws/ws-options.js'

/**
 * Options of {@link createPricesListener}: those of {@link createPricesHandler}
 * (`onError`, the query limits, the chart page's script, `basePath`).
 */
export interface PricesListenerOptions extends PricesHandlerOptions {}

/**
 * A `node:http` request listener serving `GET`/`HEAD /prices` (and `/prices/`)
 * from `store` and, when the store can also answer candles (a `PriceStore`
 * can; see `UdfSource`), TradingView's UDF endpoints under `/udf/` and
 * a chart page at `/`. Every other path answers 404 and every other method
 * on those paths answers 405 with `Allow: GET, HEAD`. It never throws:
 * unexpected failures become a 500 without internals. Heavy queries (UDF
 * history included) are capped, wait in a bounded line, and every query
 * has a time budget (503 `HTTP_BUSY` / `HTTP_QUERY_TIMEOUT` past them; see
 * `QueryLimitOptions`); each listener has its own limits. It is
 * {@link createPricesHandler}'s handler: to serve under a prefix or fall
 * through to a framework's next handler, use that.
 *
 * @example
 * http.createServer(createPricesListener(store)).listen(9000)
 */
export function createPricesListener(store: PricesQueryable, options: PricesListenerOptions = {}): RequestListener {
  // Node passes no `next`, so paths not served answer 404.
  return createPricesHandler(store, options)
}

function httpError(
  status: number,
  code: HttpErrorCode,
  message: string,
  headers: Readonly<Record<string, string>> = {},
): HttpAnswer {
  return httpErrorAnswer(status, code, message, headers)
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
  const routed = routeRequest(req.method, req.url ?? '', CONNECT_ROUTES)
  if (routed === undefined) writeRawAnswer(socket, notFoundAnswer(CONNECT_ROUTES))
  else if ('answer' in routed) writeRawAnswer(socket, routed.answer)
  else socket.destroy()
}

/** The paths {@link answerConnect} knows: those of a handler of a store with charts and no options (it has no handler to ask). */
const CONNECT_ROUTES = servedRoutes(ROUTES, (row) => row.needs === undefined || row.needs === 'charts', '')

/** Writes a whole HTTP/1.1 answer on a bare socket, then closes it once flushed. */
function writeRawAnswer(socket: Duplex, answer: HttpAnswer): void {
  const headers = Object.entries({ ...answer.headers, connection: 'close' })
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('')
  socket.once('finish', () => socket.destroy())
  socket.end(`HTTP/1.1 ${answer.status} ${STATUS_CODES[answer.status] ?? ''}\r\n${headers}\r\n${answer.body}`)
}

/** Options of {@link startServer}: the listener's, the WebSocket endpoint's (`/ws`, see {@link WebSocketOptions}), and the server's own. */
export interface StartServerOptions extends PricesListenerOptions, WebSocketOptions {
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
  const handler = createPricesHandler(store, options)
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
      handler(req, res)
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
  // WebSocket subscriptions at `${basePath}/ws`; any other upgrade (`Upgrade: h2c`) is served as the request it also is.
  const sockets = createWsEndpoint(store, options)
  server.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
    if (sockets?.upgrade(req, socket, head) !== true) answerAsRequest(server, req, socket, head)
  })

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
    queries: () => handler.queries(),
    close() {
      closed ??= new Promise<void>((resolve, reject) => {
        closing = true
        const cut = setTimeout(() => server.closeAllConnections(), graceMs)
        cut.unref()
        // Live streams never end by themselves: end them (each with a final event) so the server can close.
        void handler.close().catch((err: unknown) => reportError(options, err))
        void sockets?.close().catch((err: unknown) => reportError(options, err))
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

/**
 * An upgrade the server does not take (`Upgrade: h2c`, a WebSocket
 * handshake on another path), served as the plain request it also is, as
 * Node does without an `upgrade` listener: the request is given back to the
 * server as new, without its `Upgrade` header, so Node parses it (body
 * included) and answers it over HTTP/1.1 like any other.
 */
function answerAsRequest(server: Server, req: IncomingMessage, socket: Socket, head: Buffer): void {
  const lines = [`${req.method ?? 'GET'} ${req.url ?? '/'} HTTP/${req.httpVersion}`]
  const raw = req.rawHeaders
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if ((raw[i] as string).toLowerCase() !== 'upgrade') lines.push(`${raw[i]}: ${raw[i + 1]}`)
  }
  socket.unshift(Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), head]))
  server.emit('connection', socket)
}
