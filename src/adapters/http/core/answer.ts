import { isPriceStoreError } from '../../../errors.js'
import { toExactJson } from '../../../rules/exact-json.js'
import { isClientError, statusForError } from './status.js'
import type { StreamedBody } from './streamed-body.js'

/*
 * The answers every endpoint sends, free of sockets: their shape, the error
 * body, and how a thrown error becomes an answer. Below routing: nothing
 * here knows an endpoint.
 */

/** A complete HTTP answer, free of sockets: a host framework sends it as it likes. */
export interface HttpAnswer {
  readonly status: number
  /** Lower-case header names; always `content-type`, and `content-length` unless the answer is in `stream`. */
  readonly headers: Readonly<Record<string, string>>
  /** The JSON text of the answer (UTF-8 when sent); empty when the answer is in `stream`. */
  readonly body: string
  /**
   * A large answer to send piece by piece instead of `body` (only when
   * `streamAbove` asked for it): its headers then have no `content-length`.
   */
  readonly stream?: StreamedBody
}

/**
 * Error codes the HTTP adapter adds to the library's `PRICE_*` codes, for
 * failures that only exist in HTTP.
 */
export type HttpErrorCode =
  | 'HTTP_NOT_FOUND'
  | 'HTTP_METHOD_NOT_ALLOWED'
  | 'HTTP_BAD_REQUEST'
  | 'HTTP_HEADERS_TOO_LARGE'
  | 'HTTP_REQUEST_TIMEOUT'
  | 'HTTP_INTERNAL_ERROR'
  /** 503: too many heavy queries running and waiting (see `QueryLimitOptions`); `retry-after` says when to retry. */
  | 'HTTP_BUSY'
  /** 503: the query did not finish within its time budget (`queryTimeoutMs`); `retry-after` says when to retry. */
  | 'HTTP_QUERY_TIMEOUT'
  /** 503: the chart page's script is not built (`npm run build` makes it). */
  | 'HTTP_PAGE_NOT_BUILT'
  /** 401: a write (`POST /prices`) without `Authorization: Bearer <token>` credentials, or a read with an unknown read key (or none where one is needed); answered with `www-authenticate: Bearer`. */
  | 'HTTP_UNAUTHORIZED'
  /** 403: a write whose bearer token is not the write token; a read outside its read key's scope. */
  | 'HTTP_FORBIDDEN'
  /** 429: a reader over its read key's request or cost budget; `retry-after` says when to retry. */
  | 'HTTP_RATE_LIMITED'
  /** 413: a write's body is over `maxWriteBytes`. */
  | 'HTTP_PAYLOAD_TOO_LARGE'
  /** 415: a write's body is neither `application/json` nor `application/x-ndjson` in UTF-8, or is compressed. */
  | 'HTTP_UNSUPPORTED_MEDIA_TYPE'
  /** 400: a write's body is not a JSON array or NDJSON, or holds no records. */
  | 'HTTP_INVALID_BODY'
  /** 400: a write's `x-write-concern` header is not a whole number from 0 to 16. */
  | 'HTTP_INVALID_WRITE_CONCERN'
  /**
   * 503: a read asked for `minPosition` (or `x-min-position`) and this node
   * had not applied that position within `minPositionWaitMs`; the body's
   * error holds `position` (this node's) and `minPosition`, and
   * `retry-after` says when to retry.
   */
  | 'HTTP_POSITION_NOT_REACHED'
  /** 409: `POST /admin/backup` named a backup that exists already in the server's backup directory. */
  | 'HTTP_BACKUP_EXISTS'
  /** 409: `POST /admin/backup` while another backup runs (one at a time). */
  | 'HTTP_BACKUP_RUNNING'

const INTERNAL_MESSAGE = 'internal error while answering the request'
const NOT_OPEN_MESSAGE = 'the price store is not open (starting or shutting down); try again later'
const ABORTED_MESSAGE = 'the query was stopped before it finished; try again later'
const LOG_UNAVAILABLE_MESSAGE =
  'the replication log could not be reached or did not acknowledge the write: none or all of the batch may have been written; send the same batch again, it is applied once'
const WRITE_CONCERN_MESSAGE =
  'the replication log acknowledged the batch, but fewer nodes than the write concern asks for applied it in time: it is in the log and nodes apply it as they reach it; send the same batch again to wait once more (it is applied once)'
const REPLICA_FAILED_MESSAGE =
  'this node stopped applying the cluster\'s stream (GET /health says why) and takes no writes: nothing of the batch was written; send it to another node'


/** Where a host hears of the errors clients are not shown. */
export interface ErrorReportOptions {
  /**
   * Called with every error answered with a 5xx status, so the host can log
   * what the client is not shown. Exceptions it throws are ignored.
   */
  readonly onError?: (err: unknown) => void
}

/** Hands `err` to the host's `onError`, shielding the caller from a throwing logger. */
export function reportError(options: ErrorReportOptions, err: unknown): void {
  try {
    options.onError?.(err)
  } catch {
    // A broken logger must not turn an answer into a crash.
  }
}

/** The error answer for `err`, reported to `onError` when it is the server's fault. */
export function failedAnswer(options: ErrorReportOptions, err: unknown): HttpAnswer {
  const answer = errorAnswer(err)
  if (answer.status >= 500) reportError(options, err)
  return answer
}

/** An error answer before it is put into a body: what {@link errorAnswer} sends, and UDF in its own shape. */
export interface ErrorParts {
  readonly status: number
  readonly code: string
  readonly message: string
  /** Headers beside the body's (`retry-after` on a 503). */
  readonly headers: Readonly<Record<string, string>>
}

const NO_HEADERS: Readonly<Record<string, string>> = {}
const RETRY_AFTER: Readonly<Record<string, string>> = { 'retry-after': '1' }

/**
 * What to answer for anything thrown while answering. Client errors keep
 * their message (it names the parameter and value sent); every other error
 * gets a fixed message, so no stack, path or internal detail leaks.
 */
export function errorParts(err: unknown): ErrorParts {
  if (isPriceStoreError(err)) {
    const status = statusForError(err.code)
    if (isClientError(err.code)) return { status, code: err.code, message: String(err.message), headers: NO_HEADERS }
    // Every 503 says when to come back: the store may be restarting.
    if (status === 503) {
      return { status, code: err.code, message: unavailableMessage(err.code), headers: RETRY_AFTER }
    }
    return { status, code: err.code, message: INTERNAL_MESSAGE, headers: NO_HEADERS }
  }
  return { status: 500, code: 'HTTP_INTERNAL_ERROR', message: INTERNAL_MESSAGE, headers: NO_HEADERS }
}

/** The fixed message of a 503 for a library error: what to do about it, without internals. */
function unavailableMessage(code: string): string {
  if (code === 'PRICE_ABORTED') return ABORTED_MESSAGE
  if (code === 'PRICE_REPLICA_FAILED') return REPLICA_FAILED_MESSAGE
  if (code === 'PRICE_WRITE_CONCERN_TIMEOUT') return WRITE_CONCERN_MESSAGE
  return code === 'PRICE_LOG_UNAVAILABLE' ? LOG_UNAVAILABLE_MESSAGE : NOT_OPEN_MESSAGE
}

/** The HTTP answer for anything thrown while answering (see {@link errorParts}). */
export function errorAnswer(err: unknown): HttpAnswer {
  const { status, code, message, headers } = errorParts(err)
  return httpErrorAnswer(status, code, message, headers)
}

/** An error answer with the standard body; `extraHeaders` adds e.g. `allow` to a 405. */
export function httpErrorAnswer(
  status: number,
  code: string,
  message: string,
  extraHeaders: Readonly<Record<string, string>> = {},
): HttpAnswer {
  return jsonAnswer(status, { error: { code, message } }, extraHeaders)
}

/** 503 `HTTP_BUSY` with `retry-after: 1`: an endpoint is at its limit (streams or exports open), or the server is shutting down. */
export function busyAnswer(message: string): HttpAnswer {
  return httpErrorAnswer(503, 'HTTP_BUSY', message, { 'retry-after': '1' })
}

/** An answer whose body is `value` as JSON (`toExactJson`); `extraHeaders` adds e.g. `cache-control`. */
export function jsonAnswer(status: number, value: unknown, extraHeaders: Readonly<Record<string, string>> = {}): HttpAnswer {
  const answer = bodyAnswer(status, toExactJson(value))
  return { ...answer, headers: { ...answer.headers, ...extraHeaders } }
}

/** An answer with a JSON body; `bytes` is the body's UTF-8 length when the caller knows it already. */
export function bodyAnswer(status: number, body: string, bytes = Buffer.byteLength(body, 'utf8')): HttpAnswer {
  return {
    status,
    headers: {
      'content-type': 'application/json; charset=utf-8',
      'content-length': String(bytes),
    },
    body,
  }
}
