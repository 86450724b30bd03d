import { PriceClientError } from './client-errors.js'
import type { ClientTimers, WebSocketConstructor } from './transport-types.js'

/** How a call tries the nodes again: rounds through every node, with a growing, jittered pause between rounds. */
export interface RetryOptions {
  /** Rounds through every node before giving up with `PRICE_CLIENT_NO_NODE` (at least 1). */
  readonly rounds?: number
  /** The pause after the first round that failed, in ms; doubled after each further round. */
  readonly baseDelayMs?: number
  /** The longest pause between rounds, in ms. */
  readonly maxDelayMs?: number
}

/** What {@link PriceClient} takes. */
export interface PriceClientOptions {
  /**
   * The nodes' base URLs, `http://host:port` or with the server's `basePath` (`https://host/v1`). They are
   * tried in this order; the client stays with the one that last answered.
   */
  readonly nodes: readonly string[]
  /** The WebSocket class (default `globalThis.WebSocket`; in Node 20, pass `WebSocket` of the `ws` package). */
  readonly WebSocket?: WebSocketConstructor
  /** The fetch function (default `globalThis.fetch`). */
  readonly fetch?: typeof fetch
  /** Reads: default 3 rounds, 100 ms doubling up to 2 s. */
  readonly retry?: RetryOptions
  /** Subscriptions, counted from their last successful (re)subscribe: default 10 rounds, 100 ms doubling up to 5 s. */
  readonly subscribeRetry?: RetryOptions
  /** Bound of one HTTP request on one node, answer included (ms, default 10,000). */
  readonly requestTimeoutMs?: number
  /**
   * Bound of one subscribe on one node, from opening the WebSocket to its `subscribed` (ms, default 15,000): above
   * a node's `minPositionWaitMs` (5 s), which a node behind the client's position may wait before answering.
   */
  readonly connectTimeoutMs?: number
  /** Random numbers in [0, 1) for the jitter of the pauses (default `Math.random`). */
  readonly random?: () => number
  /** The timers of every pause and timeout (default the global `setTimeout`/`clearTimeout`). */
  readonly timers?: ClientTimers
}

/** A {@link RetryOptions} with every member set. */
export interface RetryPolicy {
  readonly rounds: number
  readonly baseDelayMs: number
  readonly maxDelayMs: number
}

/** The options, checked and completed. */
export interface ClientSettings {
  readonly nodes: readonly string[]
  readonly WebSocket: WebSocketConstructor | undefined
  readonly fetch: typeof fetch
  readonly retry: RetryPolicy
  readonly subscribeRetry: RetryPolicy
  readonly requestTimeoutMs: number
  readonly connectTimeoutMs: number
  readonly random: () => number
  readonly timers: ClientTimers
}

/** Checks and completes the options. @throws PriceClientError `PRICE_CLIENT_INVALID_OPTIONS` */
export function clientSettings(options: PriceClientOptions): ClientSettings {
  if (typeof options !== 'object' || options === null || !Array.isArray(options.nodes) || options.nodes.length === 0) {
    throw invalid('nodes', 'nodes must be a non-empty list of base URLs, e.g. ["http://127.0.0.1:9000"]')
  }
  const fetchFunction = options.fetch ?? (globalThis.fetch === undefined ? undefined : globalThis.fetch.bind(globalThis))
  if (fetchFunction === undefined) throw invalid('fetch', 'no global fetch: pass the fetch option')
  return {
    nodes: options.nodes.map(baseUrl),
    WebSocket: options.WebSocket ?? (globalThis as { WebSocket?: WebSocketConstructor }).WebSocket,
    fetch: fetchFunction,
    retry: policy(options.retry, 'retry', { rounds: 3, baseDelayMs: 100, maxDelayMs: 2_000 }),
    subscribeRetry: policy(options.subscribeRetry, 'subscribeRetry', { rounds: 10, baseDelayMs: 100, maxDelayMs: 5_000 }),
    requestTimeoutMs: positive(options.requestTimeoutMs, 'requestTimeoutMs', 10_000),
    connectTimeoutMs: positive(options.connectTimeoutMs, 'connectTimeoutMs', 15_000),
    random: options.random ?? Math.random,
    timers: options.timers ?? {
      setTimeout: (callback, ms) => globalThis.setTimeout(callback, ms),
      clearTimeout: (handle) => globalThis.clearTimeout(handle as ReturnType<typeof setTimeout>),
    },
  }
}

/** A node's base URL without its trailing slashes; http(s) only. */
function baseUrl(given: unknown): string {
  let url: URL
  try {
    url = new URL(String(given))
  } catch {
    throw invalid('nodes', `a node must be a base URL such as http://127.0.0.1:9000 (got ${JSON.stringify(given)})`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw invalid('nodes', `a node's URL is http: or https: (got ${JSON.stringify(given)})`)
  if (url.search !== '' || url.hash !== '') throw invalid('nodes', `a node's URL has no query or fragment (got ${JSON.stringify(given)})`)
  return url.href.replace(/\/+$/, '')
}

function policy(given: RetryOptions | undefined, name: string, defaults: RetryPolicy): RetryPolicy {
  const rounds = given?.rounds ?? defaults.rounds
  if (!Number.isInteger(rounds) || rounds < 1) throw invalid(name, `${name}.rounds must be a whole number ≥ 1 (got ${String(rounds)})`)
  const baseDelayMs = nonNegative(given?.baseDelayMs, `${name}.baseDelayMs`, defaults.baseDelayMs)
  const maxDelayMs = nonNegative(given?.maxDelayMs, `${name}.maxDelayMs`, Math.max(defaults.maxDelayMs, baseDelayMs))
  return { rounds, baseDelayMs, maxDelayMs }
}

function nonNegative(given: number | undefined, name: string, fallback: number): number {
  if (given === undefined) return fallback
  if (typeof given !== 'number' || !Number.isFinite(given) || given < 0) throw invalid(name, `${name} must be a number of ms ≥ 0 (got ${String(given)})`)
  return given
}

function positive(given: number | undefined, name: string, fallback: number): number {
  const value = nonNegative(given, name, fallback)
  if (value === 0) throw invalid(name, `${name} must be more than 0`)
  return value
}

function invalid(parameter: string, message: string): PriceClientError {
  return new PriceClientError('PRICE_CLIENT_INVALID_OPTIONS', message, { details: { parameter } })
}
