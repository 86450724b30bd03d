import type { ServerResponse } from 'node:http'
import { toExactJson } from '../../../rules/exact-json.js'
import { parsePortablePosition } from '../../../rules/portable-position.js'
import type { WatchItem, WatchIterator, WatchRecords } from '../../../store/services/watch/watch-options.js'
import { SSE_EVENT_END, sseComment, sseEvent, sseEventHead, sseRetry } from '../core/sse-event.js'
import { untilDrained } from '../core/streamed-body.js'
import { itemEventId, resetMembers } from './stream-items.js'

/** The headers of a live stream. A proxy must pass its events on at once (`x-accel-buffering` tells nginx) and keep none. */
export const STREAM_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache',
  'x-accel-buffering': 'no',
  // A stream ends only when it must (the server closing, a client too slow): its connection goes with it, so a closing server is not held by it.
  connection: 'close',
})

/** How a {@link StreamSubscriber} treats its client. */
export interface StreamSettings {
  /** Time without anything sent after which a comment is sent (ms). */
  readonly heartbeatMs: number
  /** Bytes queued in the response past which nothing more is taken from the watch until the client reads. */
  readonly maxQueuedBytes: number
  /** Time the client may leave a full socket unread before it is ended with an `overflow` event (ms). */
  readonly stallMs: number
  /** The `retry` sent first: how long a client waits before reconnecting (ms). */
  readonly retryMs: number
  /** Called with an error that ended the stream (a journal entry that does not decode, a storage error). */
  readonly onError: (err: unknown) => void
}

/** Records serialised per write of a large `prices` event, between which the socket's room is checked. */
const RECORDS_PER_WRITE = 64

/** Time a final event has to reach a client before its connection is cut (ms). */
const FINAL_EVENT_GRACE_MS = 1_000

/**
 * One client of `GET /prices/stream`: the items of its watch written as
 * events, each whole commit one `prices` event whose id is its position
 * (`P.tag` when the commit has a replication log's id, portable-position.ts).
 * The watch is pulled only while the response holds less than
 * `maxQueuedBytes`, so a slow client's commits wait in its watch (bounded
 * by its `maxPending`, past which the watch ends with `overflow`) and not
 * in the socket; a client that leaves a full socket unread for `stallMs`
 * gets an `overflow` event and is cut. Every event's id is a position to
 * resume after, so a client that reconnects with `Last-Event-ID` misses
 * nothing and receives nothing twice.
 */
export class StreamSubscriber {
  readonly #res: ServerResponse
  readonly #watch: WatchIterator
  readonly #gone: AbortController
  readonly #settings: StreamSettings
  /** The position of the last whole event written with an id, and that id. */
  #position: number
  #eventId: number | string
  #stopping = false
  #ended = false
  /** Part of an event is written: nothing else may be until it is whole. */
  #midEvent = false
  #wroteSinceBeat = false
  #heartbeat: NodeJS.Timeout | undefined
  #wakeRoom: (() => void) | undefined
  #onClosed: () => void = () => {}
  /** Resolves once the response is closed (ended and flushed, or cut). */
  readonly closed: Promise<void>

  /**
   * @param gone aborted (here) when the client leaves; the watch's `signal`
   * @param start the position the watch starts after, or the portable position (`P.tag`) it was given
   */
  constructor(res: ServerResponse, watch: WatchIterator, gone: AbortController, start: number | string, settings: StreamSettings) {
    this.#res = res
    this.#watch = watch
    this.#gone = gone
    this.#position = typeof start === 'number' ? start : (parsePortablePosition(start)?.position ?? 0)
    this.#eventId = start
    this.#settings = settings
    this.closed = new Promise((resolve) => (this.#onClosed = resolve))
  }

  /** Sends the headers, the `retry` and the `ready` event, then the watch's items until the stream ends. */
  start(): void {
    const res = this.#res
    const closed = (): void => {
      this.#ended = true
      clearInterval(this.#heartbeat)
      this.#gone.abort()
      this.#wakeRoom?.()
      void this.#watch.return().catch(() => {})
      this.#onClosed()
    }
    // The client may have gone already: its close event is then past.
    if (res.destroyed) return closed()
    res.once('close', closed)
    res.writeHead(200, STREAM_HEADERS)
    this.#write(sseRetry(this.#settings.retryMs) + sseEvent('ready', this.#eventId, `{"position":${this.#position}}`))
    this.#heartbeat = setInterval(() => this.#beat(), this.#settings.heartbeatMs)
    this.#heartbeat.unref()
    void this.#pump()
  }

  /** Ends the stream (the server is closing): the event being written is finished, then an `end` event is the last. */
  stop(): void {
    if (this.#stopping || this.#ended) return
    this.#stopping = true
    // A pull waiting for a commit resolves as done, and the pump sends the end.
    void this.#watch.return().catch(() => {})
    this.#wakeRoom?.()
  }

  async #pump(): Promise<void> {
    try {
      for (;;) {
        if (!(await this.#room())) return
        const step = await this.#watch.next()
        if (this.#ended) return
        if (step.done === true) {
          this.#end(sseEvent('end', undefined, `{"reason":"closing","position":${this.#position}}`))
          return
        }
        const item = step.value
        if (!(await this.#send(item))) return
        if (item.type === 'overflow') {
          this.#end('')
          return
        }
      }
    } catch (err) {
      // An abort is the client leaving; anything else broke the watch.
      if (this.#ended) return
      this.#settings.onError(err)
      if (this.#midEvent) this.#res.destroy()
      else this.#end(sseEvent('end', undefined, `{"reason":"error","position":${this.#position}}`))
    }
  }

  /** Writes one item as its event; false when the stream ended meanwhile. */
  async #send(item: WatchItem): Promise<boolean> {
    const id = itemEventId(item)
    switch (item.type) {
      case 'records':
        return this.#sendRecords(item, id)
      case 'progress':
        this.#write(sseEvent('progress', id, `{"position":${item.position}}`))
        break
      case 'reset': {
        this.#write(sseEvent('reset', id, `{${resetMembers(item)}}`))
        break
      }
      case 'overflow':
        this.#write(sseEvent('overflow', id, `{"reason":"pending","position":${item.position}}`))
        break
    }
    this.#position = item.position
    this.#eventId = id
    return true
  }

  /** A commit's records as one event, written a slice at a time while the socket has room. */
  async #sendRecords(item: WatchRecords, id: number | string): Promise<boolean> {
    const { position, records, pruned } = item
    this.#midEvent = true
    this.#write(`${sseEventHead('prices', id)}{"position":${position},${pruned === undefined ? '' : `"pruned":${pruned},`}"records":[`)
    for (let start = 0; start < records.length; start += RECORDS_PER_WRITE) {
      if (start > 0 && !(await this.#room())) return false
      const slice = records.slice(start, start + RECORDS_PER_WRITE).map((record) => toExactJson(record))
      this.#write(`${start > 0 ? ',' : ''}${slice.join(',')}`)
    }
    this.#write(`]}${SSE_EVENT_END}`)
    this.#midEvent = false
    this.#position = position
    this.#eventId = id
    return true
  }

  /**
   * Whether to go on: at once while the response holds less than the
   * bound (or the stream is stopping), else once the client has read it.
   * False once the stream ended: the client left, or let the socket stall.
   */
  #room(): boolean | Promise<boolean> {
    if (this.#ended) return false
    if (this.#stopping || this.#res.writableLength < this.#settings.maxQueuedBytes) return true
    const wait = untilDrained(this.#res, this.#settings.stallMs, () => this.#stalled())
    this.#wakeRoom = wait.wake
    return wait.done.then(() => {
      this.#wakeRoom = undefined
      return !this.#ended
    })
  }

  /** The client read nothing for the stall time: an `overflow` event if one can follow what was sent, then the connection is cut. */
  #stalled(): void {
    if (this.#midEvent) this.#res.destroy()
    else this.#end(sseEvent('overflow', this.#eventId, `{"reason":"stalled","position":${this.#position}}`))
  }

  #beat(): void {
    if (!this.#wroteSinceBeat && !this.#midEvent && !this.#ended && this.#res.writableLength < this.#settings.maxQueuedBytes) {
      this.#res.write(sseComment('heartbeat'))
    }
    this.#wroteSinceBeat = false
  }

  #write(text: string): void {
    this.#wroteSinceBeat = true
    this.#res.write(text)
  }

  /** Writes the final event and ends the response; a client that does not take it in time is cut. */
  #end(final: string): void {
    if (this.#ended) return
    this.#ended = true
    clearInterval(this.#heartbeat)
    void this.#watch.return().catch(() => {})
    const res = this.#res
    if (res.destroyed) return
    res.end(final)
    const grace = setTimeout(() => res.destroy(), FINAL_EVENT_GRACE_MS)
    grace.unref()
    res.once('close', () => clearTimeout(grace))
  }
}
