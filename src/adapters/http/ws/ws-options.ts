import { MAX_TIMER_MS, checkIntegerOption } from '../../../rules/options.js'

/**
 * Options of the WebSocket endpoint `/ws` (part of `startServer`'s options):
 * its limits, each with a default. See docs/http.md, "WebSocket subscriptions".
 */
export interface WebSocketOptions {
  /** WebSocket connections open at once; one more is closed at once with code 4001 (default {@link DEFAULT_MAX_WS_CONNECTIONS}; 0 turns `/ws` off). */
  readonly maxWsConnections?: number
  /** Subscriptions one connection may hold; one more is refused with `PRICE_WS_TOO_MANY_SUBSCRIPTIONS` (default {@link DEFAULT_WS_MAX_SUBSCRIPTIONS}). */
  readonly wsMaxSubscriptions?: number
  /** Symbols one connection may follow, summed over its subscriptions; past it `PRICE_WS_TOO_MANY_SYMBOLS` (default {@link DEFAULT_WS_MAX_SYMBOLS}). */
  readonly wsMaxSymbols?: number
  /** Largest message a client may send (bytes, default 64 KiB); a larger one closes the connection with 1009. */
  readonly wsMaxPayloadBytes?: number
  /**
   * Bytes queued in a connection's socket, not yet taken by the client, past
   * which no more commits are taken for it until the client reads (default 1 MiB).
   */
  readonly wsMaxBufferedBytes?: number
  /** Time a client may leave its full socket unread before it is closed with code 4000 (ms, default 30,000). */
  readonly wsStallMs?: number
  /** Records committed and not yet sent that one subscription may hold; past it the subscription ends with `overflow` (default 10,000). */
  readonly wsMaxPending?: number
  /**
   * Messages a client may send per second, in bursts of as many; past it the
   * connection is closed with code 4002 (default {@link DEFAULT_WS_MESSAGE_RATE}).
   */
  readonly wsMessageRate?: number
  /** Time between pings, so proxies keep an idle connection open (ms, default 15,000). */
  readonly wsPingMs?: number
}

/** Default most WebSocket connections open at once. */
export const DEFAULT_MAX_WS_CONNECTIONS = 1_024
/** Default most subscriptions of one connection. */
export const DEFAULT_WS_MAX_SUBSCRIPTIONS = 16
/** Default most symbols one connection follows, over its subscriptions. */
export const DEFAULT_WS_MAX_SYMBOLS = 256
/** Default messages per second a client may send. */
export const DEFAULT_WS_MESSAGE_RATE = 20

/**
 * The close codes `/ws` uses beyond the standard ones (1000 normal, 1001
 * the server is going away, 1009 a message too large, 1011 a server error).
 */
export const WS_CLOSE_CODES = Object.freeze({
  /** The client left its full socket unread for `wsStallMs`. */
  SLOW_CONSUMER: 4000,
  /** `maxWsConnections` connections are open already; retry later. */
  SERVER_FULL: 4001,
  /** More than `wsMessageRate` messages a second. */
  FLOOD: 4002,
})

/** The options, checked, with their defaults. */
export interface WsSettings {
  readonly maxConnections: number
  readonly maxSubscriptions: number
  readonly maxSymbols: number
  readonly maxPayloadBytes: number
  readonly maxBufferedBytes: number
  readonly stallMs: number
  readonly maxPending: number
  readonly messageRate: number
  readonly pingMs: number
}

/**
 * Checks the options of `/ws`.
 * @throws PriceStoreError `PRICE_INVALID_OPTIONS` for a value out of its range
 */
export function checkWsOptions(options: WebSocketOptions): WsSettings {
  return Object.freeze({
    maxConnections: checkIntegerOption('maxWsConnections', options.maxWsConnections, DEFAULT_MAX_WS_CONNECTIONS, 0, 1_000_000),
    maxSubscriptions: checkIntegerOption('wsMaxSubscriptions', options.wsMaxSubscriptions, DEFAULT_WS_MAX_SUBSCRIPTIONS, 1, 10_000),
    maxSymbols: checkIntegerOption('wsMaxSymbols', options.wsMaxSymbols, DEFAULT_WS_MAX_SYMBOLS, 1, 1_000_000),
    maxPayloadBytes: checkIntegerOption('wsMaxPayloadBytes', options.wsMaxPayloadBytes, 64 * 1024, 128, 64 * 1024 * 1024),
    maxBufferedBytes: checkIntegerOption('wsMaxBufferedBytes', options.wsMaxBufferedBytes, 1024 * 1024, 1, Number.MAX_SAFE_INTEGER),
    stallMs: checkIntegerOption('wsStallMs', options.wsStallMs, 30_000, 1, MAX_TIMER_MS),
    maxPending: checkIntegerOption('wsMaxPending', options.wsMaxPending, 10_000, 1, Number.MAX_SAFE_INTEGER),
    messageRate: checkIntegerOption('wsMessageRate', options.wsMessageRate, DEFAULT_WS_MESSAGE_RATE, 1, 1_000_000),
    pingMs: checkIntegerOption('wsPingMs', options.wsPingMs, 15_000, 1, MAX_TIMER_MS),
  })
}
