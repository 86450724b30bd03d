import type { PriceAnswer, PriceRecord } from '../types.js'
import { PriceClientError } from './client-errors.js'
import { clientSettings, type ClientSettings, type PriceClientOptions } from './client-options.js'
import { readJson, type ReadOptions } from './http-reads.js'
import { Subscription, type PriceSubscription, type SubscribeOptions } from './subscription.js'

/**
 * Parameters of `GET /prices`, as in docs/http.md: `symbol`, `symbols`, `limit`, `fromTimestamp`, `interval`,
 * `fields`, `aggregate`, ... A list (`symbols: ['BTC','ETH']`) is sent comma-separated; `undefined` is left out.
 */
export type ClientQueryParams = Readonly<Record<string, string | number | boolean | readonly string[] | undefined>> | URLSearchParams

/** What {@link PriceClient.latest} takes. */
export interface LatestReadOptions extends ReadOptions {
  /** Record fields to keep, or all prefixed `-` to leave out. */
  readonly fields?: readonly string[]
}

/**
 * A client of several price-store nodes (the nodes of one cluster, or one server): typed reads of `GET /prices`
 * and live subscriptions over `/ws`, each going on at another node when one fails. It uses only `fetch`,
 * `WebSocket`, `AbortSignal` and timers, so it runs in browsers and in Node (give Node 20 the `ws` package's
 * `WebSocket`). It follows one node, the one that last answered, and moves on only when that one fails.
 */
export class PriceClient {
  readonly #settings: ClientSettings
  #preferred = 0

  /** @throws PriceClientError `PRICE_CLIENT_INVALID_OPTIONS` */
  constructor(options: PriceClientOptions) {
    this.#settings = clientSettings(options)
  }

  /** The nodes' base URLs, as the client uses them. */
  get nodes(): readonly string[] {
    return this.#settings.nodes
  }

  /** The base URL of the node tried first: the one that last answered. */
  get node(): string {
    return this.#settings.nodes[this.#preferred]!
  }

  /**
   * Follows `symbols`' commits, live, over a WebSocket (`/ws`) to one node, then another if it fails: resuming
   * after the last `eventId` received, with no gap and no duplicate. The first update of each connection is
   * `connected`; a `reset` says the node could not replay from there (re-read with {@link PriceClient.query}).
   * Iterate it once; `close()`, the `signal`, or leaving the loop ends it. Once every node failed for
   * `subscribeRetry.rounds` rounds, the iteration throws `PRICE_CLIENT_NO_NODE`; a subscribe a node refuses
   * (`PRICE_INVALID_SYMBOL`, ...) throws that node's error.
   * @throws PriceClientError `PRICE_CLIENT_INVALID_OPTIONS` (no symbols, no WebSocket class)
   */
  subscribe<R = PriceRecord>(symbols: readonly string[], options: SubscribeOptions = {}): PriceSubscription<R> {
    if (!Array.isArray(symbols) || symbols.length === 0 || !symbols.every((symbol) => typeof symbol === 'string')) {
      throw new PriceClientError('PRICE_CLIENT_INVALID_OPTIONS', 'subscribe takes a non-empty list of symbols, e.g. ["BTC","ETH"]', { details: { parameter: 'symbols' } })
    }
    const WebSocket = this.#settings.WebSocket
    if (WebSocket === undefined) {
      throw new PriceClientError('PRICE_CLIENT_INVALID_OPTIONS', 'no global WebSocket: pass the WebSocket option (in Node 20, WebSocket of the ws package)', { details: { parameter: 'WebSocket' } })
    }
    return new Subscription<R>(this.#settings, WebSocket, symbols, options, this.#preferred, (index) => (this.#preferred = index))
  }

  /**
   * The newest record of `symbol` (`GET /prices?symbol=`), or undefined when the node holds none.
   * @throws PriceClientError the node's code (`PRICE_INVALID_SYMBOL`, ...), `PRICE_CLIENT_NO_NODE`, `PRICE_ABORTED`
   */
  async latest(symbol: string, options: LatestReadOptions = {}): Promise<PriceRecord | undefined> {
    const answer = await this.query<PriceRecord[]>({ symbol, fields: options.fields }, options)
    return Array.isArray(answer) ? answer[0] : undefined
  }

  /**
   * Any `GET /prices` query; the answer as the node sends it (an array for single-symbol forms, an object keyed
   * by symbol for several and TWAP): give its type as `T`.
   * @throws PriceClientError the node's code (`PRICE_INVALID_QUERY`, ...), `PRICE_CLIENT_NO_NODE`, `PRICE_ABORTED`
   */
  async query<T = PriceAnswer>(params: ClientQueryParams, options: ReadOptions = {}): Promise<T> {
    const search = toSearch(params)
    const path = `/prices${search === '' ? '' : `?${search}`}`
    return (await readJson(this.#settings, path, options, this.#preferred, (index) => (this.#preferred = index))) as T
  }
}

function toSearch(params: ClientQueryParams): string {
  if (params instanceof URLSearchParams) return params.toString()
  const search = new URLSearchParams()
  for (const [name, value] of Object.entries(params)) {
    if (value === undefined) continue
    search.set(name, Array.isArray(value) ? value.join(',') : String(value))
  }
  return search.toString()
}
