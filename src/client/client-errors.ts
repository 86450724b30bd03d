/**
 * The client's coded errors. Codes of its own start with `PRICE_CLIENT_`;
 * an error a node answered (a 400 `PRICE_INVALID_QUERY`, a WebSocket
 * `error` message) keeps that node's code, so a caller tells them apart by
 * `code` alone.
 */

/** The codes the client makes itself; a node's own codes (`PRICE_INVALID_SYMBOL`, `HTTP_NOT_FOUND`, ...) pass through. */
export type PriceClientErrorCode =
  /** Every node was tried, each failed (see `details.nodes` for each one's last error), for as many rounds as `retry.rounds`. */
  | 'PRICE_CLIENT_NO_NODE'
  /** The options given to the client or to one call are not usable (no node, a URL that is not http(s), no WebSocket). */
  | 'PRICE_CLIENT_INVALID_OPTIONS'
  /** The caller's `AbortSignal` stopped a read. */
  | 'PRICE_ABORTED'
  /** A node did not answer within `requestTimeoutMs` (a read) or `connectTimeoutMs` (a subscription). Recorded per node. */
  | 'PRICE_CLIENT_TIMEOUT'
  /** A node could not be reached, or the connection was lost. Recorded per node. */
  | 'PRICE_CLIENT_NETWORK'
  /** A node answered something that is not the protocol (not JSON, a message of an unknown shape). Recorded per node. */
  | 'PRICE_CLIENT_BAD_ANSWER'

/** One node's last failure, as `details.nodes` of `PRICE_CLIENT_NO_NODE` lists it. */
export interface NodeFailure {
  /** The node's base URL, as given to the client. */
  readonly node: string
  /** The node's own error code when it answered one (`HTTP_BUSY`, `PRICE_NOT_OPEN`), else a `PRICE_CLIENT_` code. */
  readonly code: string
  readonly message: string
  /** The HTTP status, when the node answered. */
  readonly status?: number
}

/** Facts about an error, for programs that report it. */
export interface PriceClientErrorDetails {
  /** For `PRICE_CLIENT_NO_NODE`: each node's last error, in the order of the client's nodes. */
  readonly nodes?: readonly NodeFailure[]
  /** The node that answered the error, for an error passed through. */
  readonly node?: string
  /** The HTTP status of an error passed through. */
  readonly status?: number
  /** The option at fault, for `PRICE_CLIENT_INVALID_OPTIONS`. */
  readonly parameter?: string
}

/** The one error class the client throws. Check `code` (or {@link isPriceClientError}) rather than `instanceof`. */
export class PriceClientError extends Error {
  /** A {@link PriceClientErrorCode}, or the code a node answered. */
  readonly code: string
  readonly details: PriceClientErrorDetails

  constructor(code: string, message: string, options: { cause?: unknown; details?: PriceClientErrorDetails } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.code = code
    this.details = Object.freeze({ ...options.details })
  }

  override get name(): string {
    return 'PriceClientError'
  }
}

/** Whether `err` is an error of the client (or one a node answered through it), optionally with the given code. */
export function isPriceClientError(err: unknown, code?: PriceClientErrorCode | (string & {})): err is PriceClientError {
  if (typeof err !== 'object' || err === null || (err as { name?: unknown }).name !== 'PriceClientError') return false
  const actual = (err as { code?: unknown }).code
  return typeof actual === 'string' && (code === undefined || actual === code)
}

/**
 * Node codes that say "not now, or not this node": another node (or the same one later) may answer. Any other
 * code a node answers is about the request itself and is passed to the caller at once.
 */
const RETRIED_CODES: ReadonlySet<string> = new Set([
  'HTTP_BUSY', 'HTTP_QUERY_TIMEOUT', 'HTTP_POSITION_NOT_REACHED', 'HTTP_INTERNAL_ERROR', 'HTTP_REQUEST_TIMEOUT',
  'PRICE_NOT_OPEN', 'PRICE_ABORTED', 'PRICE_STORAGE_ERROR', 'PRICE_CORRUPT_VALUE', 'PRICE_LOG_UNAVAILABLE', 'PRICE_REPLICA_FAILED',
])

/** Whether a node's answer with this code and status is worth trying again on another node. */
export function isRetried(code: string, status?: number): boolean {
  if (RETRIED_CODES.has(code)) return true
  return status !== undefined && (status >= 500 || status === 408 || status === 429)
}
