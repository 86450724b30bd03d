/**
 * The stable error codes of the library. The code is the contract; messages
 * may change between releases.
 */
export type PriceStoreErrorCode =
  /** A `symbol` or `symbols` entry breaks the symbol rules. */
  | 'PRICE_INVALID_SYMBOL'
  /** A record given to `put`/`putMany` breaks the record rules. */
  | 'PRICE_INVALID_RECORD'
  /** A record of a batch given to a store that verifies signatures (`signatures.policy` `reject`) has a signature that is not valid. */
  | 'PRICE_INVALID_SIGNATURE'
  /** A malformed, repeated or conflicting query parameter (`limit`, `offset`, `symbols`, `provider`, ...). */
  | 'PRICE_INVALID_QUERY'
  /** A bad `fromTimestamp`/`toTimestamp`, `from > to`, or `interval` without both timestamps. */
  | 'PRICE_INVALID_RANGE'
  /** A bad `interval`, or `interval` without `symbol`. */
  | 'PRICE_INVALID_INTERVAL'
  /** The `provider` parameter names a provider this store does not serve. */
  | 'PRICE_UNSUPPORTED_PROVIDER'
  /** A range-form answer would hold more than `maxRangePoints` records. */
  | 'PRICE_RANGE_TOO_LARGE'
  /** Options given to the store (provider, limits) are invalid. */
  | 'PRICE_INVALID_OPTIONS'
  /** The store is not open (not yet opened, closing or closed). */
  | 'PRICE_NOT_OPEN'
  /** Another process (or another store in this process) holds the database lock. */
  | 'PRICE_LOCKED'
  /** The database was written in a format version this release cannot read. */
  | 'PRICE_UNSUPPORTED_FORMAT'
  /** The store was created for another provider (id or public key) than the one given when opening it. */
  | 'PRICE_PROVIDER_MISMATCH'
  /** A stored value could not be decoded. */
  | 'PRICE_CORRUPT_VALUE'
  /** Any other failure of the underlying database. */
  | 'PRICE_STORAGE_ERROR'
  /** A query or stream was stopped by the `AbortSignal` given as its `signal` option. */
  | 'PRICE_ABORTED'
  /** The replication log (NATS JetStream) cannot be reached or did not acknowledge a write. */
  | 'PRICE_LOG_UNAVAILABLE'
  /** A replicated store cannot follow its log: the log no longer holds the commits after its position (re-seed it from a backup), or the store holds commits the log does not (another log, or writes made without it). */
  | 'PRICE_REPLICA_DIVERGED'
  /** A cluster node that stopped applying its log (see `PRICE_REPLICA_DIVERGED`) was asked to write: write to another node. */
  | 'PRICE_REPLICA_FAILED'
  /** A cluster node's write is in the log, but fewer nodes than its write concern asked for applied it in time. */
  | 'PRICE_WRITE_CONCERN_TIMEOUT'

/** Structured facts about an error, for programs that report it (e.g. a CLI mapping `index` to a line number). */
export interface PriceStoreErrorDetails {
  /** The query parameter, option or argument at fault (`signal`, or `records` for a batch that is not iterable). */
  readonly parameter?: string
  /** The record field at fault. */
  readonly field?: string
  /** The position of the bad record in its batch (0-based). */
  readonly index?: number
  /** The storage key at fault, printable. */
  readonly key?: string
  /** For `PRICE_RANGE_TOO_LARGE`: how many records the answer would hold. */
  readonly count?: number
  /** For `PRICE_RANGE_TOO_LARGE`: the cap in force. */
  readonly cap?: number
  /** For `PRICE_INVALID_OPTIONS` on an explicit commit position, and `PRICE_REPLICA_DIVERGED`: the store's position. */
  readonly position?: number
  /**
   * For `PRICE_REPLICA_DIVERGED`: true when the store forked from its stream, which holds every record the store holds
   * (the store sent the ones the stream lost again): a store rebuilt from the stream replaces it, losing nothing.
   */
  readonly forked?: boolean
}

/**
 * The one error class the library throws. Check `code` (or use
 * {@link isPriceStoreError}) rather than `instanceof`, which fails when two
 * copies of the package are loaded.
 */
export class PriceStoreError extends Error {
  readonly code: PriceStoreErrorCode
  readonly details: PriceStoreErrorDetails

  constructor(
    code: PriceStoreErrorCode,
    message: string,
    options: { cause?: unknown; details?: PriceStoreErrorDetails } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.code = code
    this.details = Object.freeze({ ...options.details })
  }

  override get name(): string {
    return 'PriceStoreError'
  }
}

/**
 * Whether `err` is a {@link PriceStoreError}, optionally with the given code.
 * Checks the code, so it also works across duplicate package copies.
 */
export function isPriceStoreError(err: unknown, code?: PriceStoreErrorCode): err is PriceStoreError {
  if (typeof err !== 'object' || err === null) return false
  const actual = (err as { code?: unknown }).code
  if (typeof actual !== 'string' || !actual.startsWith('PRICE_')) return false
  return code === undefined || actual === code
}

/**
 * Whether `err` refuses a batch for one of its records (`PRICE_INVALID_RECORD`, or `PRICE_INVALID_SIGNATURE` from a
 * store that rejects bad signatures): `details.index` then names the record, when the batch is iterable.
 */
export function isRecordRefusal(err: unknown): err is PriceStoreError {
  return isPriceStoreError(err, 'PRICE_INVALID_RECORD') || isPriceStoreError(err, 'PRICE_INVALID_SIGNATURE')
}

/** Renders a received value for an error message: strings quoted, long ones cut. */
export function describeValue(value: unknown): string {
  let text: string
  if (typeof value === 'string') text = JSON.stringify(value)
  else if (value === undefined) text = 'undefined'
  else if (typeof value === 'bigint') text = `${value}n`
  // JSON would print NaN and Infinity as null, and -0 as 0.
  else if (typeof value === 'number') text = Object.is(value, -0) ? '-0' : String(value)
  else if (typeof value === 'function' || typeof value === 'symbol') text = typeof value
  else {
    try {
      text = JSON.stringify(value) ?? String(value)
    } catch {
      text = Object.prototype.toString.call(value)
    }
  }
  return text.length > 80 ? `${text.slice(0, 77)}...` : text
}
