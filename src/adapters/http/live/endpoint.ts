import type { Reader } from '../access/read-access.js'
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { AnswerCompression } from '../core/compression.js'

/** One request for a live endpoint, as the handler routed it. */
export interface LiveRequest {
  readonly req: IncomingMessage
  readonly res: ServerResponse
  /** The query string's parameters. */
  readonly params: URLSearchParams
  /** A HEAD request: the headers GET would send, and no body. */
  readonly head: boolean
  /** When the request arrived (`performance.now()`). */
  readonly arrivedAt: number
  /** How answers that can be large are compressed (the handler's `compression`; none when off). */
  readonly compression?: AnswerCompression | undefined
  /** Who reads, when the server has read keys (admitted already: one request taken from its budget). */
  readonly reader?: Reader | undefined
}

/**
 * Answers one request. It owns the request from here: it reads (or drains)
 * the body, answers, and never throws (a failure is answered, or the
 * connection is closed when the answer is already under way).
 */
export type LiveEndpointHandler = (request: LiveRequest) => void

/** What the live endpoints count for one another (the stream's subscribers for `/metrics`, ...). */
export class LiveCounters {
  /** Live streams open now. */
  streamSubscribers = 0
  /** Exports being sent now. */
  exports = 0
}
