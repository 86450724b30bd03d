import type { PriceStoreErrorCode } from '../../../errors.js'

/**
 * The HTTP status for a library error code: the only place that knows HTTP
 * statuses for library errors (SPEC §4).
 *
 * - 400: the request was wrong (bad or conflicting parameters, an unsupported
 *   provider, a range answer over the cap).
 * - 503: the store is not open (opening, closing or closed), the query was
 *   aborted by its host's signal, or the replication log cannot take a write;
 *   retrying later may work.
 * - 500: a fault on the server side. `PRICE_INVALID_OPTIONS` is here on
 *   purpose: it means the server was configured wrongly, not that the client erred.
 */
export function statusForError(code: PriceStoreErrorCode): 400 | 500 | 503 {
  // Exhaustive on purpose: a new code fails the type check until it is placed here.
  switch (code) {
    case 'PRICE_INVALID_SYMBOL':
    case 'PRICE_INVALID_QUERY':
    case 'PRICE_INVALID_RANGE':
    case 'PRICE_INVALID_INTERVAL':
    case 'PRICE_INVALID_RECORD':
    case 'PRICE_INVALID_SIGNATURE':
    case 'PRICE_UNSUPPORTED_PROVIDER':
    case 'PRICE_RANGE_TOO_LARGE':
      return 400
    case 'PRICE_NOT_OPEN':
    case 'PRICE_ABORTED':
    case 'PRICE_LOG_UNAVAILABLE':
    case 'PRICE_REPLICA_FAILED':
    case 'PRICE_WRITE_CONCERN_TIMEOUT':
      return 503
    case 'PRICE_INVALID_OPTIONS':
    case 'PRICE_LOCKED':
    case 'PRICE_UNSUPPORTED_FORMAT':
    case 'PRICE_PROVIDER_MISMATCH':
    case 'PRICE_CORRUPT_VALUE':
    case 'PRICE_STORAGE_ERROR':
    case 'PRICE_REPLICA_DIVERGED':
      return 500
    default: {
      // Exhaustiveness at compile time; at run time an unknown code (say, from
      // another copy of the package) is still a server fault, never a crash.
      const unknown: never = code
      void unknown
      return 500
    }
  }
}

/**
 * Whether the error's own message may be shown to an HTTP client. Only
 * client errors qualify: they name the parameter and the value the client
 * sent, while server-side messages may hold paths or other internals.
 */
export function isClientError(code: PriceStoreErrorCode): boolean {
  return statusForError(code) === 400
}
