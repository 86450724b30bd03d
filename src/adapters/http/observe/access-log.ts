/**
 * One line of the access log: a request, once its answer has ended or its
 * connection closed. It holds no header (no `Authorization`, no cookie,
 * no token) and no body. Optional fields that do not apply are `undefined`
 * (so `JSON.stringify` leaves them out).
 */
export interface AccessLogEntry {
  /** When the request arrived (ISO 8601, UTC, ms). */
  readonly time: string
  readonly method: string
  /** The request target's path, as sent (undecoded). */
  readonly path: string
  /** The request target's query string without `?`, as sent (`''` for none), but for the values of credential-like parameters (`api_key`, `key`, `token`, ...): `REDACTED`. */
  readonly query: string
  /**
   * What answered it: `prices`, `udf_config`, `udf_symbols`, `udf_search`,
   * `udf_history`, `udf_time`, `page`, `write`, `stream`, `export`, `stats`,
   * `health`, `metrics`, `quality`, `verify`, `openapi`, `not_found` or
   * `method_not_allowed`.
   */
  readonly endpoint: string
  /** The query's form (`latest`, `latest-n`, `history`, `several`, `range`, `filled`, `candles`, `twap`), when it was planned. */
  readonly form?: string | undefined
  /** The id of the request's read key (`anonymous` for none), when the server has read keys; never the key. */
  readonly reader?: string | undefined
  /** The status sent; 0 when the connection closed before one was. */
  readonly status: number
  /** Bytes written to the connection for the answer, status line and headers included. */
  readonly bytes: number
  /** From the arrival to the answer's end, or to the connection's close (ms, to the µs). */
  readonly durationMs: number
  /** The client's address (the connection's peer: a proxy, behind one). */
  readonly remoteAddress?: string | undefined
  /** Present (true) when the answer did not end: the client left, or the connection was cut. */
  readonly aborted?: true | undefined
}

/** Options of a handler for watching its requests: metrics and the access log, both off by default. */
export interface ObservationOptions {
  /**
   * Serve `GET /metrics` in the Prometheus text format and count every
   * request for it (default false; `price-store serve` turns it on). Each
   * handler has its own registry.
   */
  readonly metrics?: boolean
  /**
   * Called once per request the handler serves, when its answer has ended
   * or its connection closed (default none). Exceptions it throws go to
   * `onError`. `price-store serve --access-log` writes each as a JSON line.
   */
  readonly accessLog?: (entry: AccessLogEntry) => void
}

/** The second {@link isoTime} formatted last, and its text up to the milliseconds (`2024-06-01T08:00:00.`). */
let isoSecond = Number.NaN
let isoPrefix = ''

/**
 * `new Date(ms).toISOString()` for a time from 1970 to 9999, formatting each
 * second once: a full format costs more than the rest of an access log entry.
 */
export function isoTime(ms: number): string {
  const second = Math.floor(ms / 1000)
  if (second !== isoSecond) {
    isoSecond = second
    isoPrefix = new Date(second * 1000).toISOString().slice(0, 20)
  }
  const milli = ms - second * 1000
  return `${isoPrefix}${milli < 10 ? '00' : milli < 100 ? '0' : ''}${milli}Z`
}
