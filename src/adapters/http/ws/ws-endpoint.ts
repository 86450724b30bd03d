import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http'
import type { Duplex } from 'node:stream'
import { WebSocketServer, type WebSocket } from 'ws'
import { MAX_TIMER_MS, checkIntegerOption } from '../../../rules/options.js'
import { storeMeets, supportsOf } from '../capabilities.js'
import { ReadAccess, Reader, admitReader } from '../access/read-access.js'
import type { ReadKeysOptions } from '../access/read-keys.js'
import { reportError, type ErrorReportOptions, type HttpAnswer } from '../core/answer.js'
import { CorsPolicy, type CorsOptions } from '../core/cors.js'
import { DEFAULT_MIN_POSITION_WAIT_MS, type ReplicaOptions } from '../live/replica.js'
import { checkBasePath } from '../routes.js'
import { SYSTEM_CLOCK, type CoalescerClock } from './coalescer.js'
import { WsConnection, type WsStore } from './ws-connection.js'
import { WS_CLOSE_CODES, checkWsOptions, type WebSocketOptions } from './ws-options.js'

/** The path of the endpoint below the handler's base path. */
export const WS_PATH = '/ws'

/** Time a connection has to take its final messages when the server closes before it is cut (ms). */
const FINAL_MESSAGE_GRACE_MS = 1_000

/** What the endpoint reads from the server's options. */
export interface WsEndpointOptions extends WebSocketOptions, ErrorReportOptions, Pick<ReplicaOptions, 'replica' | 'minPositionWaitMs'> {
  /** The handler's base path: the endpoint is `${basePath}/ws`. */
  readonly basePath?: string
  /** The handler's CORS: the origins whose pages may connect besides the server's own. */
  readonly cors?: CorsOptions
  /** The handler's read keys: a handshake is admitted as a read (401, 429), and each subscription kept to its reader's scope. */
  readonly readKeys?: ReadKeysOptions
}

/** How many connections are open, and how many were closed for leaving their socket full (for tests and reports). */
export interface WsLoad {
  readonly connections: number
  readonly slowClosed: number
}

/** The endpoint as a server hooks it in. */
export interface WsEndpoint {
  /**
   * Takes an `upgrade` request for `/ws` (a WebSocket handshake) and
   * returns true; returns false, touching nothing, for any other path.
   */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): boolean
  /** Ends every subscription with an `end` message and closes every connection (1001); resolves once they are closed. */
  close(): Promise<void>
  /** The connections open now, and how many were closed as slow consumers so far. */
  load(): WsLoad
}

/**
 * `/ws`: WebSocket subscriptions to the store's commits (see docs/http.md,
 * "WebSocket subscriptions"), or `undefined` when the store cannot be
 * watched or `maxWsConnections` is 0. A page of another origin connects
 * only where CORS lets it read, as with the live stream.
 * @param clock the coalescing clock of `fixed_rate` channels (tests give their own)
 * @throws PriceStoreError `PRICE_INVALID_OPTIONS` for a bad option
 */
export function createWsEndpoint(store: object, options: WsEndpointOptions = {}, clock: CoalescerClock = SYSTEM_CLOCK): WsEndpoint | undefined {
  const settings = checkWsOptions(options)
  const path = `${checkBasePath(options.basePath)}${WS_PATH}`
  const cors = CorsPolicy.of(options.cors)
  const access = options.readKeys === undefined ? undefined : ReadAccess.of(options.readKeys)
  if (settings.maxConnections === 0 || !storeMeets('watch', supportsOf(store))) return undefined
  // No compression: a compressor holds back what it has not flushed, and `bufferedAmount` would not count it.
  const server = new WebSocketServer({ noServer: true, maxPayload: settings.maxPayloadBytes, perMessageDeflate: false, clientTracking: false })
  const connections = new Set<WsConnection>()
  const waitMs = checkIntegerOption('minPositionWaitMs', options.minPositionWaitMs, DEFAULT_MIN_POSITION_WAIT_MS, 0, MAX_TIMER_MS)
  const catchUp = options.replica === undefined ? undefined : { replica: options.replica, waitMs }
  const parts = { store: store as WsStore, settings, clock, catchUp, onError: (err: unknown) => reportError(options, err), onSlowClose: () => void slowClosed++ }
  let closing = false
  let slowClosed = 0

  const accept = (req: IncomingMessage, socket: Duplex, head: Buffer, reader: Reader | undefined): void => {
    server.handleUpgrade(req, socket, head, (ws) => {
      // Refused after the handshake, so a browser's page sees the close code and reason (a refused handshake tells it nothing).
      if (closing) return refuse(ws, 1001, 'the server is closing; connect to another instance or later')
      if (connections.size >= settings.maxConnections) {
        return refuse(ws, WS_CLOSE_CODES.SERVER_FULL, `${settings.maxConnections} connections are open, the most this server takes; retry later`)
      }
      const connection = new WsConnection(ws, socket, reader === undefined ? parts : { ...parts, reader })
      connections.add(connection)
      void connection.closed.then(() => connections.delete(connection))
    })
  }

  return {
    upgrade(req, socket, head) {
      const url = req.url ?? ''
      const query = url.indexOf('?')
      if ((query === -1 ? url : url.slice(0, query)) !== path) return false
      socket.on('error', () => socket.destroy())
      if (!originMayRead(cors, req)) {
        socket.end('HTTP/1.1 403 Forbidden\r\ncontent-type: application/json; charset=utf-8\r\nconnection: close\r\n\r\n'
          + '{"error":{"code":"HTTP_FORBIDDEN","message":"pages of this origin may not read this server (see its cors option)"}}')
        return true
      }
      let reader: Reader | undefined
      if (access !== undefined) {
        const admitted = admitReader(access, 'scoped', req, path)
        if (!(admitted instanceof Reader)) {
          socket.end(rawAnswer(admitted))
          return true
        }
        reader = admitted
      }
      accept(req, socket, head, reader)
      return true
    },
    async close() {
      closing = true
      const open = [...connections]
      const cut = setTimeout(() => {
        for (const connection of open) connection.terminate()
      }, FINAL_MESSAGE_GRACE_MS)
      cut.unref()
      await Promise.all(open.map((connection) => connection.shutdown()))
      clearTimeout(cut)
    },
    load: () => ({ connections: connections.size, slowClosed }),
  }
}

/** An answer as the raw HTTP response that refuses a handshake. */
function rawAnswer(answer: HttpAnswer): string {
  const headers = Object.entries(answer.headers).filter(([name]) => name !== 'content-length').map(([name, value]) => `${name}: ${value}\r\n`).join('')
  const body = Buffer.from(answer.body, 'utf8')
  return `HTTP/1.1 ${answer.status} ${STATUS_CODES[answer.status] ?? ''}\r\n${headers}content-length: ${body.length}\r\nconnection: close\r\n\r\n${answer.body}`
}

/** Closes a connection refused after its handshake; one that does not answer the close in time is cut (it is counted nowhere). */
function refuse(ws: WebSocket, code: number, reason: string): void {
  ws.close(code, reason)
  const cut = setTimeout(() => ws.terminate(), FINAL_MESSAGE_GRACE_MS)
  cut.unref()
  ws.once('close', () => clearTimeout(cut))
}

/**
 * Whether the handshake's page may read: a client that is not a page (no
 * `Origin`), a page of the server's own origin, or one CORS lets read.
 */
function originMayRead(cors: CorsPolicy | undefined, req: IncomingMessage): boolean {
  const origin = req.headers.origin
  if (origin === undefined) return true
  try {
    if (new URL(origin).host === req.headers.host) return true
  } catch {
    return false
  }
  if (cors === undefined) return false
  // The policy says so by what it would set on a read's answer.
  let allowed = false
  const probe = { setHeader: (name: string) => void (allowed ||= name === 'access-control-allow-origin') } as unknown as ServerResponse
  cors.allowRead(req, probe)
  return allowed
}
