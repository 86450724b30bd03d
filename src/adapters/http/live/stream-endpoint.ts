import { MAX_TIMER_MS, checkIntegerOption } from '../../../rules/options.js'
import { parsePortablePosition } from '../../../rules/portable-position.js'
import { busyAnswer, failedAnswer, reportError, type ErrorReportOptions } from '../core/answer.js'
import { sendAnswer } from '../core/send.js'
import { DEFAULT_SEND_STALL_MS, MAX_QUEUED_CHARS } from '../core/streamed-body.js'
import type { LiveCounters, LiveEndpointHandler, LiveRequest } from './endpoint.js'
import type { ReplicaSource } from './replica.js'
import { readerFeed } from '../access/reader-request.js'
import { delayedWatch } from './delayed-watch.js'
import { newestPosition, selectedWatch, type WatchableStore } from './stream-items.js'
import { LAST_EVENT_ID, readStreamParams, type StreamParams } from './stream-params.js'
import { STREAM_HEADERS, StreamSubscriber, type StreamSettings } from './stream-subscriber.js'

/** Options of the live stream, `GET /prices/stream` (part of the handler's options). */
export interface StreamEndpointOptions {
  /** Streams open at once; one more is answered 503 `HTTP_BUSY` with `retry-after` (default {@link DEFAULT_MAX_STREAM_SUBSCRIBERS}). */
  readonly maxStreamSubscribers?: number
  /**
   * Time a stream may go without sending anything before it sends a
   * heartbeat (an SSE comment line), so proxies and load balancers keep an
   * idle stream open (ms, default {@link DEFAULT_STREAM_HEARTBEAT_MS}).
   */
  readonly streamHeartbeatMs?: number
  /**
   * Records (matching the stream's symbols) committed but not yet sent that
   * a stream may hold; past it the client is too slow: it gets an
   * `overflow` event and the stream ends (the watch's `maxPending`, default 10,000).
   */
  readonly streamMaxPending?: number
  /**
   * Bytes of events queued in a stream's response, not yet taken by the
   * client, past which the stream stops taking commits until the client
   * reads (default 256 KiB). Commits meanwhile wait in the watch, counted
   * against `streamMaxPending`.
   */
  readonly streamMaxQueuedBytes?: number
  /**
   * Time a client may leave a full socket unread before its stream is ended
   * with an `overflow` event and its connection cut (ms, default 30,000).
   */
  readonly streamStallMs?: number
  /**
   * The `retry` each stream sends first: how long an `EventSource` waits
   * before it reconnects after losing the stream (ms, default {@link DEFAULT_STREAM_RETRY_MS}).
   */
  readonly streamRetryMs?: number
}

/** Default most streams open at once. */
export const DEFAULT_MAX_STREAM_SUBSCRIBERS = 256
/** Default time an idle stream waits before a heartbeat (ms). */
export const DEFAULT_STREAM_HEARTBEAT_MS = 15_000
/** Default `retry` of a stream: a client reconnects a second after losing it (ms). */
export const DEFAULT_STREAM_RETRY_MS = 1_000
/**
 * Default `streamMaxPending`: the same as the watch's own default
 * `maxPending` (`DEFAULT_MAX_PENDING` in the store's watch options), kept
 * here as a number because adapters take only types from the store.
 */
export const DEFAULT_STREAM_MAX_PENDING = 10_000

export type { WatchableStore } from './stream-items.js'

/** A replicated node's stream waits for the position a resuming client names (see {@link createStreamEndpoint}). */
export interface StreamCatchUp {
  readonly replica: Pick<ReplicaSource, 'waitForPosition'>
  /** Longest wait (ms): the handler's `minPositionWaitMs`. */
  readonly waitMs: number
}

/** The live stream's handler and what ends its streams. */
export interface StreamEndpoint {
  readonly handler: LiveEndpointHandler
  /** Ends every stream with a final `end` event; resolves once their connections are closed. New streams get 503. */
  close(): Promise<void>
}

/**
 * `GET /prices/stream`: the commits of `store.watch()` as Server-Sent
 * Events (see docs/http.md, "Live stream"). The parameters are checked by
 * the watch itself before anything is sent, so a bad one is a coded 400.
 * On a replicated node (`catchUp`), a stream resuming after a position the
 * node has not applied yet (a client that lost another node) first waits
 * for it, at most `catchUp.waitMs`.
 * @throws PriceStoreError `PRICE_INVALID_OPTIONS` for a bad option
 */
export function createStreamEndpoint(
  store: WatchableStore, options: StreamEndpointOptions & ErrorReportOptions, counters: LiveCounters, catchUp?: StreamCatchUp,
): StreamEndpoint {
  const maxSubscribers = checkIntegerOption('maxStreamSubscribers', options.maxStreamSubscribers, DEFAULT_MAX_STREAM_SUBSCRIBERS, 0, 1_000_000)
  const maxPending = checkIntegerOption('streamMaxPending', options.streamMaxPending, DEFAULT_STREAM_MAX_PENDING, 1, Number.MAX_SAFE_INTEGER)
  const settings: StreamSettings = {
    heartbeatMs: checkIntegerOption('streamHeartbeatMs', options.streamHeartbeatMs, DEFAULT_STREAM_HEARTBEAT_MS, 1, MAX_TIMER_MS),
    maxQueuedBytes: checkIntegerOption('streamMaxQueuedBytes', options.streamMaxQueuedBytes, MAX_QUEUED_CHARS, 1, Number.MAX_SAFE_INTEGER),
    stallMs: checkIntegerOption('streamStallMs', options.streamStallMs, DEFAULT_SEND_STALL_MS, 1, MAX_TIMER_MS),
    retryMs: checkIntegerOption('streamRetryMs', options.streamRetryMs, DEFAULT_STREAM_RETRY_MS, 0, MAX_TIMER_MS),
    onError: (err) => reportError(options, err),
  }
  const subscribers = new Set<StreamSubscriber>()
  let closing = false
  const handler: LiveEndpointHandler = (request) => {
    const { req, res, params, head } = request
    // A body means nothing here; draining it keeps the connection readable.
    req.resume()
    try {
      const wanted = readStreamParams(params, req.headers[LAST_EVENT_ID])
      const after = typeof wanted.after === 'string' ? parsePortablePosition(wanted.after)?.position : wanted.after
      if (catchUp !== undefined && after !== undefined && after > store.position && !head) {
        // A client resuming from another node of the cluster: this node has not applied its position yet. Waiting
        // for it (a bounded time) lets the stream go on with no gap; after that, the watch says `reset`.
        const gone = new AbortController()
        res.once('close', () => gone.abort())
        void catchUp.replica.waitForPosition(after, catchUp.waitMs, gone.signal).then(() => {
          if (!gone.signal.aborted) open(request, wanted)
        })
        return
      }
      open(request, wanted)
    } catch (err) {
      sendAnswer(res, failedAnswer(options, err), head)
    }
  }
  const open = ({ res, head, reader }: LiveRequest, asked: StreamParams): void => {
    try {
      if (closing) return sendAnswer(res, busyAnswer('the server is shutting down; reconnect to another instance or later'), head)
      const feed = readerFeed(reader, asked)
      if ('status' in feed) return sendAnswer(res, feed, head)
      const wanted = { ...asked, ...feed }
      // Without a position the stream starts at the newest commit, and its
      // ready event says so (naming the commit when it has an id): a client
      // that reconnects with it misses nothing.
      const after = wanted.after ?? newestPosition(store)
      const gone = new AbortController()
      const watch = selectedWatch(wanted.fields, delayedWatch(store.watch({
        ...(wanted.symbols === undefined ? {} : { symbols: wanted.symbols }),
        // A portable position and a malformed `after` stay text: the watch checks the one and refuses the other.
        after,
        maxPending,
        signal: gone.signal,
      }), reader?.delayMs ?? 0))
      if (head || subscribers.size >= maxSubscribers) {
        void watch.return().catch(() => {})
        if (head) return sendAnswer(res, { status: 200, headers: STREAM_HEADERS, body: '' }, true)
        return sendAnswer(res, busyAnswer(`${maxSubscribers} live streams are open, the most this server takes; try again later`), head)
      }
      const subscriber = new StreamSubscriber(res, watch, gone, after, settings)
      subscribers.add(subscriber)
      counters.streamSubscribers++
      void subscriber.closed.then(() => {
        subscribers.delete(subscriber)
        counters.streamSubscribers--
      })
      subscriber.start()
    } catch (err) {
      sendAnswer(res, failedAnswer(options, err), head)
    }
  }
  return {
    handler,
    async close() {
      closing = true
      const open = [...subscribers]
      for (const subscriber of open) subscriber.stop()
      await Promise.all(open.map((subscriber) => subscriber.closed))
    },
  }
}
