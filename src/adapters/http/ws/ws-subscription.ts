import { toExactJson } from '../../../rules/exact-json.js'
import { parsePortablePosition, portableId } from '../../../rules/portable-position.js'
import type { WatchItem, WatchIterator } from '../../../store/services/watch/watch-options.js'
import type { PriceRecord } from '../../../types.js'
import { itemEventId, resetMembers } from '../live/stream-items.js'
import { Coalescer, type CoalescedUpdate, type CoalescerClock } from './coalescer.js'
import type { SubscriptionId } from './ws-messages.js'

/** What a subscription sends through: its connection. */
export interface SubscriptionOutlet {
  /** Sends one text frame. */
  send(text: string): void
  /** Whether to go on: at once while the socket has room, else once the client read (false once the connection is gone). */
  room(): boolean | Promise<boolean>
  /** An error that ended the subscription (a storage error, a journal entry that does not decode). */
  onError(err: unknown): void
}

/** How a subscription sends: every item, or coalesced at a fixed rate on a clock. */
export interface SubscriptionPace {
  /** 0: every commit; else at most one update per this many ms. */
  readonly intervalMs: number
  readonly clock: CoalescerClock
}

/**
 * One subscription of a WebSocket connection: the items of its watch sent
 * as messages, each carrying the subscription's `id` and, when it moves the
 * subscription on, the `eventId` a client resumes after (`after`), exactly
 * as the live stream's event ids. The watch is pulled only while the
 * connection's socket has room, so a slow client's commits wait in the
 * watch (bounded by its `maxPending`, past which it ends with `overflow`).
 */
export class WsSubscription {
  readonly id: SubscriptionId
  readonly #idJson: string
  readonly #watch: WatchIterator
  readonly #outlet: SubscriptionOutlet
  readonly #coalescer: Coalescer | undefined
  /** The symbols followed now: fewer than the watch's once some were unsubscribed (their records are dropped here). */
  readonly #symbols: Set<string>
  #narrowed = false
  /** The position of the last item sent (or where the subscription started), as a client resumes after it. */
  #position: number
  #eventId: number | string
  /** `silent`: replaced or unsubscribed, nothing more is said; `closing`: the server closes, an `end` is the last message. */
  #stop: 'silent' | 'closing' | undefined
  #ended = false
  #onEnded: () => void = () => {}
  /** Resolves once the subscription sends nothing more. */
  readonly ended: Promise<void>

  /** @param start the position the watch starts after, or the portable position (`P.tag`) it was given */
  constructor(id: SubscriptionId, symbols: readonly string[], watch: WatchIterator, start: number | string, pace: SubscriptionPace, outlet: SubscriptionOutlet) {
    this.id = id
    this.#idJson = JSON.stringify(id)
    this.#symbols = new Set(symbols)
    this.#watch = watch
    this.#outlet = outlet
    this.#position = typeof start === 'number' ? start : (parsePortablePosition(start)?.position ?? 0)
    this.#eventId = start
    this.#coalescer = pace.intervalMs === 0 ? undefined : new Coalescer(pace.intervalMs, pace.clock, (update) => this.#sendCoalesced(update))
    this.ended = new Promise((resolve) => (this.#onEnded = resolve))
  }

  /** The symbols followed now. */
  get symbols(): ReadonlySet<string> {
    return this.#symbols
  }

  /** Where a subscription taking this one's place goes on from: the last position sent. */
  get eventId(): number | string {
    return this.#eventId
  }

  /** Starts sending; the caller has sent `subscribed` first. */
  start(): void {
    void this.#pump()
  }

  /** Stops following `symbols`; true when none is left (the subscription should end). */
  drop(symbols: Iterable<string>): boolean {
    for (const symbol of symbols) if (this.#symbols.delete(symbol)) this.#narrowed = true
    return this.#symbols.size === 0
  }

  /** Ends the subscription: without a word (`silent`), or with an `end` message (`closing`: the server closes). */
  stop(how: 'silent' | 'closing'): void {
    if (this.#ended || this.#stop !== undefined) return
    this.#stop = how
    if (how === 'silent') this.#finish()
    // A pull waiting for a commit resolves as done; the pump then says `end`.
    void this.#watch.return().catch(() => {})
  }

  async #pump(): Promise<void> {
    try {
      for (;;) {
        if (this.#ended || !(await this.#outlet.room()) || this.#ended) return this.#finish()
        const step = await this.#watch.next()
        if (this.#ended) return
        if (step.done === true) return this.#end('closing')
        this.#take(step.value)
        if (step.value.type === 'overflow') return this.#finish()
      }
    } catch (err) {
      if (this.#ended || this.#stop !== undefined) return this.#finish()
      this.#outlet.onError(err)
      this.#end('error')
    }
  }

  #take(item: WatchItem): void {
    const coalescer = this.#coalescer
    switch (item.type) {
      case 'records': {
        const records = this.#narrowed ? item.records.filter((record) => this.#symbols.has(record.symbol)) : item.records
        if (coalescer !== undefined) return coalescer.add(item.position, item.commitTag, records)
        if (records.length === 0 && item.pruned === undefined) return this.#moved(item.position, itemEventId(item))
        const pruned = item.pruned === undefined ? '' : `"pruned":${item.pruned},`
        return this.#sendItem('prices', item, `${pruned}"records":${recordsJson(records)}`, item.position)
      }
      case 'progress':
        if (coalescer?.pending === true) return coalescer.add(item.position, item.commitTag, [])
        return this.#sendItem('progress', item, '', item.position)
      case 'reset':
        coalescer?.flush()
        return this.#sendItem('reset', item, resetMembers(item), undefined)
      case 'overflow':
        coalescer?.flush()
        return this.#sendItem('overflow', item, '"reason":"pending"', item.position)
    }
  }

  /** One message for one item; `position` is given when the members do not hold it already. */
  #sendItem(type: string, item: WatchItem, members: string, position: number | undefined): void {
    const eventId = itemEventId(item)
    const at = position === undefined ? '' : `"position":${position}${members === '' ? '' : ','}`
    this.#outlet.send(`{"type":"${type}","id":${this.#idJson},"eventId":"${eventId}",${at}${members}}`)
    this.#moved(item.position, eventId)
  }

  #sendCoalesced(update: CoalescedUpdate): void {
    const eventId = portableId(update.position, { tag: update.commitTag })
    this.#outlet.send(`{"type":"prices","id":${this.#idJson},"eventId":"${eventId}","position":${update.position},"records":${recordsJson(update.records)}}`)
    this.#moved(update.position, eventId)
  }

  #moved(position: number, eventId: number | string): void {
    this.#position = position
    this.#eventId = eventId
  }

  /** The last message: the server closes (`closing`) or the watch failed (`error`). A subscription stopped silently says nothing. */
  #end(reason: 'closing' | 'error'): void {
    if (this.#ended) return
    if (this.#stop !== 'silent') {
      this.#coalescer?.flush()
      this.#outlet.send(`{"type":"end","id":${this.#idJson},"eventId":"${this.#eventId}","reason":"${reason}","position":${this.#position}}`)
    }
    this.#finish()
  }

  #finish(): void {
    if (this.#ended) return
    this.#ended = true
    this.#coalescer?.close()
    void this.#watch.return().catch(() => {})
    this.#onEnded()
  }
}

/** Records as a JSON array, each exactly as `/prices` serialises it. */
function recordsJson(records: readonly PriceRecord[]): string {
  return `[${records.map((record) => toExactJson(record)).join(',')}]`
}
