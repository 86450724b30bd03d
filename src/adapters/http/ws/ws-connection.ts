import type { Duplex } from 'node:stream'
import { performance } from 'node:perf_hooks'
import type { WebSocket } from 'ws'
import { parsePortablePosition } from '../../../rules/portable-position.js'
import { errorParts } from '../core/answer.js'
import type { ReplicaSource } from '../live/replica.js'
import type { Reader } from '../access/read-access.js'
import { readerFeed } from '../access/reader-request.js'
import { delayedWatch } from '../live/delayed-watch.js'
import { newestPosition, selectedWatch, type WatchableStore } from '../live/stream-items.js'
import type { CoalescerClock } from './coalescer.js'
import { MessageBudget } from './message-budget.js'
import { WsRefusal, readClientMessage, type SubscribeMessage, type SubscriptionId, type UnsubscribeMessage } from './ws-messages.js'
import { WS_CLOSE_CODES, type WsSettings } from './ws-options.js'
import { WsSubscription } from './ws-subscription.js'

/** What a connection subscribes to: a watchable store, which may also list its symbols (to name the unknown ones). */
export interface WsStore extends WatchableStore {
  symbols?(): Promise<readonly string[]>
}

/** What a connection is given beyond its socket. */
export interface WsConnectionParts {
  readonly store: WsStore
  readonly settings: WsSettings
  readonly clock: CoalescerClock
  /** Errors that ended a subscription (storage, decoding): the host's `onError`. */
  readonly onError: (err: unknown) => void
  /** A client was closed for leaving its socket full (counted by the endpoint). */
  readonly onSlowClose: () => void
  /** On a replicated node: a subscription resuming after a position not applied here yet waits for it, at most `waitMs`. */
  readonly catchUp?: { readonly replica: Pick<ReplicaSource, 'waitForPosition'>; readonly waitMs: number } | undefined
  /** Who reads, when the server has read keys: each subscription is kept to its symbols, fields and delay. */
  readonly reader?: Reader | undefined
}

/** Time a full socket is checked again when it gave no `drain` to wait for (ms). */
const ROOM_POLL_MS = 20

/**
 * One client of `/ws`: its messages read in order, its subscriptions (one
 * watch each, keyed by the client's `id`), and the bound on what waits in
 * its socket. Nothing a client sends ends the server: a bad message gets
 * an `error` reply, a flood or a socket left full closes the connection.
 */
export class WsConnection {
  readonly #ws: WebSocket
  readonly #socket: Duplex
  readonly #parts: WsConnectionParts
  readonly #budget: MessageBudget
  readonly #subscriptions = new Map<string, WsSubscription>()
  /** Messages are handled one after the other: a subscribe that waits (for the store's symbols) keeps its place. */
  #chain: Promise<void> = Promise.resolve()
  #room: Promise<boolean> | undefined
  /** Aborted when the connection closes: ends a subscribe's wait for a position. */
  readonly #gone = new AbortController()
  #ping: NodeJS.Timeout
  #closed = false
  #onClosed: () => void = () => {}
  /** Resolves once the connection is closed. */
  readonly closed: Promise<void>

  constructor(ws: WebSocket, socket: Duplex, parts: WsConnectionParts) {
    this.#ws = ws
    this.#socket = socket
    this.#parts = parts
    this.#budget = new MessageBudget(parts.settings.messageRate, () => performance.now())
    this.closed = new Promise((resolve) => (this.#onClosed = resolve))
    ws.on('message', (data, isBinary) => this.#onMessage(data, isBinary))
    // A protocol error (a frame too large, a bad frame): ws closes with the matching code; nothing to add.
    ws.on('error', () => {})
    ws.on('close', () => this.#onClose())
    this.#ping = setInterval(() => {
      if (ws.readyState === ws.OPEN && ws.bufferedAmount === 0) ws.ping()
    }, parts.settings.pingMs)
    this.#ping.unref()
  }

  /** The server closes: every subscription says `end` (`closing`), then the connection closes with 1001. */
  async shutdown(): Promise<void> {
    const subscriptions = [...this.#subscriptions.values()]
    for (const subscription of subscriptions) subscription.stop('closing')
    await Promise.all(subscriptions.map((subscription) => subscription.ended))
    this.close(1001, 'the server is closing; reconnect and resume after your last eventId')
    await this.closed
  }

  /** Closes with `code`; a client that does not answer the close within ws's close timeout is cut. */
  close(code: number, reason: string): void {
    if (this.#ws.readyState === this.#ws.CLOSED || this.#ws.readyState === this.#ws.CLOSING) return
    this.#ws.close(code, reason)
  }

  /** Cuts the connection at once (a client that did not take its final messages in time). */
  terminate(): void {
    this.#ws.terminate()
  }

  #onMessage(data: unknown, isBinary: boolean): void {
    if (this.#closed) return
    if (!this.#budget.take()) {
      this.close(WS_CLOSE_CODES.FLOOD, `more than ${this.#parts.settings.messageRate} messages a second`)
      return
    }
    let text: string
    try {
      if (isBinary) throw new WsRefusal('PRICE_WS_BAD_MESSAGE', 'messages are JSON text frames, not binary ones')
      text = Buffer.isBuffer(data) ? data.toString('utf8') : Buffer.concat(data as Buffer[]).toString('utf8')
    } catch (err) {
      this.#refuse(err, null)
      return
    }
    this.#chain = this.#chain.then(() => this.#handle(text))
  }

  async #handle(text: string): Promise<void> {
    try {
      const message = readClientMessage(text)
      if (message.type === 'subscribe') await this.#subscribe(message)
      else this.#unsubscribe(message)
    } catch (err) {
      this.#refuse(err, err instanceof WsRefusal ? err.id : null)
    }
  }

  async #subscribe(message: SubscribeMessage): Promise<void> {
    const { store, settings, reader } = this.#parts
    const key = JSON.stringify(message.id)
    const feed = readerFeed(reader, message)
    if ('status' in feed) throw new WsRefusal('PRICE_WS_FORBIDDEN', feed.message, message.id)
    const existing = this.#subscriptions.get(key)
    if (existing === undefined && this.#subscriptions.size >= settings.maxSubscriptions) {
      throw new WsRefusal('PRICE_WS_TOO_MANY_SUBSCRIPTIONS', `a connection holds at most ${settings.maxSubscriptions} subscriptions; unsubscribe one, or give this one the id of one to replace`, message.id)
    }
    let others = 0
    for (const [other, subscription] of this.#subscriptions) if (other !== key) others += subscription.symbols.size
    if (others + message.symbols.length > settings.maxSymbols) {
      throw new WsRefusal('PRICE_WS_TOO_MANY_SYMBOLS', `a connection follows at most ${settings.maxSymbols} symbols over its subscriptions (this one would follow ${others + message.symbols.length})`, message.id)
    }
    const known = store.symbols === undefined ? undefined : new Set(await store.symbols())
    // Taking the place of a subscription of the same id: it goes on after the last position that one sent, so the symbols kept have no gap.
    const after = message.after ?? this.#subscriptions.get(key)?.eventId ?? newestPosition(store)
    const wanted = typeof after === 'number' ? after : parsePortablePosition(after)?.position
    const { catchUp } = this.#parts
    if (catchUp !== undefined && wanted !== undefined && wanted > store.position) {
      // A client resuming from another node of the cluster: as on the live stream, waiting for its position (a bounded
      // time) lets the subscription go on with no gap; after that, the watch says `reset`.
      await catchUp.replica.waitForPosition(wanted, catchUp.waitMs, this.#gone.signal)
    }
    if (this.#closed) return
    // The watch checks the symbols and the position (a coded error, the subscription left as it was).
    const watch = selectedWatch(feed.fields, delayedWatch(store.watch({ symbols: message.symbols, after, maxPending: settings.maxPending }), reader?.delayMs ?? 0, this.#parts.clock))
    this.#subscriptions.get(key)?.stop('silent')
    const subscription = new WsSubscription(message.id, message.symbols, watch, after, { intervalMs: message.intervalMs, clock: this.#parts.clock }, {
      send: (frame) => this.#send(frame),
      room: () => this.#roomToSend(),
      onError: this.#parts.onError,
    })
    this.#subscriptions.set(key, subscription)
    void subscription.ended.then(() => {
      if (this.#subscriptions.get(key) === subscription) this.#subscriptions.delete(key)
    })
    const unknown = known === undefined ? [] : message.symbols.filter((symbol) => !known.has(symbol))
    const position = typeof after === 'number' ? after : Number(after.slice(0, after.indexOf('.')))
    this.#send(`{"type":"subscribed","id":${key},"symbols":${JSON.stringify(message.symbols)},"unknown":${JSON.stringify(unknown)},"channel":"${message.channel}","eventId":"${after}","position":${position}}`)
    subscription.start()
  }

  #unsubscribe(message: UnsubscribeMessage): void {
    const targets = message.id === undefined ? [...this.#subscriptions.values()] : [this.#subscriptions.get(JSON.stringify(message.id))].filter((s) => s !== undefined)
    const ended: SubscriptionId[] = []
    for (const subscription of targets) {
      if (message.symbols === undefined || subscription.drop(message.symbols)) {
        subscription.stop('silent')
        this.#subscriptions.delete(JSON.stringify(subscription.id))
        ended.push(subscription.id)
      }
    }
    const symbols = message.symbols === undefined ? '' : `,"symbols":${JSON.stringify(message.symbols)}`
    this.#send(`{"type":"unsubscribed","id":${JSON.stringify(message.id ?? null)}${symbols},"ended":${JSON.stringify(ended)}}`)
  }

  #refuse(err: unknown, id: SubscriptionId): void {
    const parts = err instanceof WsRefusal ? { code: err.code, message: err.message, status: 400 } : errorParts(err)
    // As on HTTP: what is the server's fault is logged, the client is told no internals.
    if (parts.status >= 500) this.#parts.onError(err)
    const { code, message } = parts
    this.#send(`{"type":"error","id":${JSON.stringify(id)},"code":${JSON.stringify(code)},"message":${JSON.stringify(message)}}`)
  }

  #send(frame: string): void {
    if (this.#ws.readyState === this.#ws.OPEN) this.#ws.send(frame)
  }

  /**
   * Whether subscriptions may take more: at once while the socket holds
   * less than `wsMaxBufferedBytes`, else once the client has read (one
   * wait shared by every subscription). A client that leaves it full for
   * `wsStallMs` is closed with 4000; false once the connection is closing.
   */
  #roomToSend(): boolean | Promise<boolean> {
    if (this.#ws.readyState !== this.#ws.OPEN) return false
    if (this.#ws.bufferedAmount < this.#parts.settings.maxBufferedBytes) return true
    this.#room ??= this.#waitForRoom().finally(() => (this.#room = undefined))
    return this.#room
  }

  #waitForRoom(): Promise<boolean> {
    const { maxBufferedBytes, stallMs } = this.#parts.settings
    return new Promise<boolean>((resolve) => {
      const socket = this.#socket
      const check = (): void => {
        if (this.#ws.readyState !== this.#ws.OPEN) return done(false)
        if (this.#ws.bufferedAmount < maxBufferedBytes) return done(true)
        // `drain` comes only after a write the socket refused; below its own mark, look again shortly.
        if (!socket.writableNeedDrain) poll = setTimeout(check, ROOM_POLL_MS)
      }
      const done = (room: boolean): void => {
        clearTimeout(stall)
        clearTimeout(poll)
        socket.off('drain', check)
        this.#ws.off('close', check)
        resolve(room)
      }
      const stall = setTimeout(() => {
        this.#parts.onSlowClose()
        this.close(WS_CLOSE_CODES.SLOW_CONSUMER, `the client read nothing for ${stallMs} ms with ${maxBufferedBytes} bytes or more waiting`)
        done(false)
      }, stallMs)
      let poll: NodeJS.Timeout | undefined
      socket.on('drain', check)
      this.#ws.on('close', check)
      check()
    })
  }

  #onClose(): void {
    if (this.#closed) return
    this.#closed = true
    this.#gone.abort()
    clearInterval(this.#ping)
    for (const subscription of this.#subscriptions.values()) subscription.stop('silent')
    this.#subscriptions.clear()
    this.#onClosed()
  }
}
