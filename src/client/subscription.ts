import type { PriceRecord } from '../types.js'
import { PriceClientError, isRetried, type NodeFailure } from './client-errors.js'
import type { ClientSettings } from './client-options.js'
import { FailoverPlan, pause } from './backoff.js'
import type { PriceUpdate } from './updates.js'
import type { WebSocketConstructor } from './transport-types.js'
import { WsSession } from './ws-session.js'

/** How a subscription sends: every commit, or at most one update per interval with each symbol's newest record. */
export type Channel = 'real_time' | 'fixed_rate@200ms' | 'fixed_rate@1s'

/** What {@link PriceClient.subscribe} takes besides the symbols. */
export interface SubscribeOptions {
  /** Record fields to keep (`["symbol","value","timestamp"]`), or all prefixed `-` to leave out. */
  readonly fields?: readonly string[]
  /** Default `real_time`. */
  readonly channel?: Channel
  /** Start after this position (an update's `eventId`): replayed, then live. Default: the newest commit. */
  readonly after?: string | number
  /** Ends the subscription: the iteration finishes (without an error). */
  readonly signal?: AbortSignal
}

/** A live subscription: iterate it (once) for its updates. */
export interface PriceSubscription<R = PriceRecord> extends AsyncIterable<PriceUpdate<R>> {
  /** The last `eventId` received (undefined before the first update): where it would resume. */
  readonly lastEventId: string | undefined
  /** The node followed now, or last. */
  readonly node: string | undefined
  /** Ends the subscription: the iteration finishes (without an error). */
  close(): void
}

/** The name of the one subscription of each of the client's connections. */
const SUBSCRIPTION_ID = 'price-client'

/** How one connection ended: go on at the same node (an overflow), or at the next one after a failure. */
type Ending = { readonly again: 'same' } | { readonly again: 'next'; readonly failure: NodeFailure }

/**
 * A subscription following one node at a time over `/ws`. When its connection is lost (closed, a timeout, the
 * node's `end`, an error the node may not make again), it subscribes on the next node with `after` set to the
 * last `eventId` received: the cluster's positions name the same commits on every node, so the records go on
 * with no gap and no duplicate. A `reset` the node sends is handed to the caller as it is.
 */
export class Subscription<R = PriceRecord> implements PriceSubscription<R> {
  readonly #settings: ClientSettings
  readonly #WebSocket: WebSocketConstructor
  readonly #symbols: readonly string[]
  readonly #options: SubscribeOptions
  readonly #start: number
  readonly #answered: (index: number) => void
  /** Aborted by `close()` or the caller's signal. */
  readonly #stop = new AbortController()
  #session: WsSession | undefined
  #iterated = false
  #lastEventId: string | undefined
  #node: string | undefined

  constructor(settings: ClientSettings, WebSocket: WebSocketConstructor, symbols: readonly string[], options: SubscribeOptions, start: number, answered: (index: number) => void) {
    this.#settings = settings
    this.#WebSocket = WebSocket
    this.#symbols = symbols
    this.#options = options
    this.#start = start
    this.#answered = answered
    this.#lastEventId = options.after === undefined ? undefined : String(options.after)
    options.signal?.addEventListener('abort', this.#onAbort, { once: true })
    if (options.signal?.aborted === true) this.close()
  }

  readonly #onAbort = (): void => this.close()

  get lastEventId(): string | undefined {
    return this.#lastEventId
  }

  get node(): string | undefined {
    return this.#node
  }

  close(): void {
    this.#stop.abort()
    this.#session?.close()
    // The caller's signal may outlive the subscription: it keeps no hold on it.
    this.#options.signal?.removeEventListener('abort', this.#onAbort)
  }

  [Symbol.asyncIterator](): AsyncIterator<PriceUpdate<R>> {
    if (this.#iterated) throw new PriceClientError('PRICE_CLIENT_INVALID_OPTIONS', 'a subscription is iterated once; subscribe again for another reader')
    this.#iterated = true
    return this.#run()
  }

  async *#run(): AsyncGenerator<PriceUpdate<R>, void, undefined> {
    const settings = this.#settings
    const plan = new FailoverPlan(settings.nodes, settings.subscribeRetry, settings.random, this.#start)
    const stop = this.#stop.signal
    try {
      for (let attempt = plan.next(); ; attempt = plan.next()) {
        if (stop.aborted) return
        if (attempt === undefined) throw plan.noNode(`subscribe to ${this.#symbols.join(',')}`)
        if (attempt.delayMs > 0 && !(await pause(attempt.delayMs, settings.timers, stop))) return
        const ending = yield* this.#follow(attempt.node, attempt.index, plan)
        if (ending === undefined) return
        if (ending.again === 'same') plan.restart(attempt.index)
        else plan.fail(ending.failure)
      }
    } finally {
      this.close()
    }
  }

  /** Follows one node until its connection ends; undefined once the subscription was closed. */
  async *#follow(node: string, index: number, plan: FailoverPlan): AsyncGenerator<PriceUpdate<R>, Ending | undefined, undefined> {
    const settings = this.#settings
    const after = this.#lastEventId
    const session = new WsSession(this.#WebSocket, `${node.replace(/^http/, 'ws')}/ws`, JSON.stringify({
      type: 'subscribe', id: SUBSCRIPTION_ID, symbols: this.#symbols, fields: this.#options.fields, channel: this.#options.channel, after,
    }))
    this.#session = session
    const failed = (code: string, message: string): Ending => ({ again: 'next', failure: { node, code, message } })
    /** The position of the last update yielded here: a commit at or before it is never yielded twice. */
    let last: number | undefined
    let subscribed = false
    try {
      if (this.#stop.signal.aborted) return undefined
      for (;;) {
        const event = subscribed ? await session.next() : await session.next(settings.timers, settings.connectTimeoutMs)
        if (this.#stop.signal.aborted) return undefined
        if (event.kind === 'timeout') return failed('PRICE_CLIENT_TIMEOUT', `no answer to subscribe within ${settings.connectTimeoutMs} ms`)
        if (event.kind === 'closed') return failed('PRICE_CLIENT_NETWORK', `the connection closed (${event.code}${event.reason === '' ? '' : ` ${event.reason}`})`)
        if (event.kind === 'bad') return failed('PRICE_CLIENT_BAD_ANSWER', `a message that is not a JSON object: ${event.text}`)
        const message = event.message
        if (message.id !== SUBSCRIPTION_ID) continue
        if (message.type === 'error') {
          const code = typeof message.code === 'string' ? message.code : 'PRICE_CLIENT_BAD_ANSWER'
          const text = typeof message.message === 'string' ? message.message : 'an error without a message'
          if (isRetried(code)) return failed(code, text)
          throw new PriceClientError(code, text, { details: { node } })
        }
        const eventId = message.eventId
        const position = message.position
        if (typeof eventId !== 'string' || typeof position !== 'number') return failed('PRICE_CLIENT_BAD_ANSWER', `a ${String(message.type)} message without eventId or position`)
        switch (message.type) {
          case 'subscribed':
            subscribed = true
            last = position
            this.#node = node
            this.#lastEventId = eventId
            // Through: the next failure starts a fresh set of rounds, at the node after this one.
            plan.restart(index + 1)
            this.#answered(index)
            yield { type: 'connected', eventId, position, node, resumed: after !== undefined, unknown: strings(message.unknown) }
            break
          case 'prices':
          case 'progress':
            if (!subscribed) return failed('PRICE_CLIENT_BAD_ANSWER', `${message.type} before subscribed`)
            if (last !== undefined && position <= last) break
            last = position
            this.#lastEventId = eventId
            if (message.type === 'progress') yield { type: 'progress', eventId, position, node }
            else {
              const records = Array.isArray(message.records) ? (message.records as R[]) : []
              yield { type: 'prices', eventId, position, node, records, ...(typeof message.pruned === 'number' ? { pruned: message.pruned } : {}) }
            }
            break
          case 'reset': {
            const reason = message.reason
            if (reason !== 'trimmed' && reason !== 'unknown' && reason !== 'forked') return failed('PRICE_CLIENT_BAD_ANSWER', `a reset of reason ${String(reason)}`)
            // The stream goes on after `position`, whatever came before: the caller is told, and positions count from there.
            last = position
            this.#lastEventId = eventId
            yield { type: 'reset', eventId, position, node, reason, requested: typeof message.requested === 'number' ? message.requested : 0 }
            break
          }
          case 'overflow':
            // The node is well; this client fell behind. Resume there at once.
            this.#lastEventId = eventId
            return { again: 'same' }
          case 'end':
            this.#lastEventId = eventId
            return failed('PRICE_CLIENT_NETWORK', `the node ended the subscription (${String(message.reason)})`)
          default:
            break
        }
      }
    } finally {
      session.close()
      if (this.#session === session) this.#session = undefined
    }
  }
}

function strings(value: unknown): readonly string[] {
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : []
}
