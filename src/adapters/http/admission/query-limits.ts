/**
 * Admission control for the store queries behind `GET /prices`, so that one
 * client cannot starve the others:
 *
 * - each query is weighed before it runs: its cost is the work it will do,
 *   in records read and returned, estimated by the store from its plan and
 *   what the store knows of its data (`PriceStore.cost`). A query costing
 *   at most `lightQueryCost` is light and runs at once: it never waits
 *   behind heavy ones;
 * - at most `maxConcurrentQueries` heavy queries run against the store at
 *   once (a streamed answer holds its slot until it is sent);
 * - up to `maxQueuedQueries` heavy queries wait for a slot, the line ordered
 *   by arrival plus cost (a cheaper query passes costlier ones that came
 *   shortly before it); past that a query is refused at once with 503 `HTTP_BUSY`;
 * - every query has a time budget of `queryTimeoutMs`, counted from the
 *   request's arrival (time spent waiting included). A query still waiting
 *   when its budget runs out is dropped from the line and answered 503
 *   `HTTP_BUSY`; a query still running is answered 503 `HTTP_QUERY_TIMEOUT`.
 *   A LevelDB read cannot be cancelled, so a timed-out query runs to its end
 *   and its answer is thrown away; it keeps its slot until then, so the cap
 *   always counts the work the store is really doing.
 *
 * Both 503 answers carry `retry-after: 1`.
 */
export interface QueryLimitOptions {
  /** Heavy queries running at once (default {@link DEFAULT_MAX_CONCURRENT_QUERIES}); at least 1. */
  readonly maxConcurrentQueries?: number
  /** Heavy queries waiting for a slot (default {@link DEFAULT_MAX_QUEUED_QUERIES}); 0 refuses at once when all slots are taken. */
  readonly maxQueuedQueries?: number
  /** Time budget of one query in ms, from arrival to answer (default {@link DEFAULT_QUERY_TIMEOUT_MS}); 0 means none. */
  readonly queryTimeoutMs?: number
  /**
   * Heavy answers in flight at once: running, or streamed to clients that
   * read slowly (default {@link DEFAULT_MAX_ANSWERS_IN_FLIGHT}). An answer
   * waiting for its client gives its slot to the next query but still holds
   * the records it chose, so this bounds that memory.
   */
  readonly maxAnswersInFlight?: number
  /** The most a query may cost and run at once, without a slot (default {@link DEFAULT_LIGHT_QUERY_COST}). */
  readonly lightQueryCost?: number
}

/**
 * Default cap on heavy queries at once. Decoding and serialising run on the
 * one JavaScript thread, so more heavy queries at once buy no throughput,
 * only latency for everyone: see the cap sweep in docs/reliability.md, where
 * 1 and 2 did best. (An answer waiting for a slow client parks and gives its
 * slot on, so slow clients do not hold the slots.) 2 rather than 1, so that one slow heavy query (a cold
 * disk) does not hold up every other.
 */
export const DEFAULT_MAX_CONCURRENT_QUERIES = 2
/**
 * Default number of heavy queries waiting for a slot: about as many as get
 * through within the default 10 s budget when the store is busy (a query
 * that cannot is better refused at once than after 10 s of waiting).
 */
export const DEFAULT_MAX_QUEUED_QUERIES = 64
/** Default time budget of one query (ms). */
export const DEFAULT_QUERY_TIMEOUT_MS = 10_000
/**
 * Default number of heavy answers in flight: each holds at most
 * `maxRangePoints` chosen records' stored bytes (about 6 MB at the default
 * cap) while its client reads, so 16 bound that to about 100 MB.
 */
export const DEFAULT_MAX_ANSWERS_IN_FLIGHT = 16
/**
 * Default cost up to which a query is light: a few hundred records, which
 * take a millisecond or two to answer, so light queries at once never hold
 * the server long (several tokens over 500 symbols, the latest 500 records,
 * a day at ten minutes or coarser).
 */
export const DEFAULT_LIGHT_QUERY_COST = 500

/** What a {@link QueryGate} has seen so far, and what it holds now. */
export interface QueryLoad {
  /** Heavy queries running against the store now (timed-out ones included until they end). */
  readonly running: number
  /** Heavy answers being sent to clients that read slowly now (each parked, without a slot). */
  readonly sending: number
  /** Heavy queries waiting for a slot now. */
  readonly queued: number
  /** Queries refused with `HTTP_BUSY` so far (line full, or budget spent waiting). */
  readonly refused: number
  /** Queries answered `HTTP_QUERY_TIMEOUT` so far. */
  readonly timedOut: number
}

/** The error handed to `onError` for a refused or timed-out query: `code` is `HTTP_BUSY` or `HTTP_QUERY_TIMEOUT`. */
export interface QueryLimitError extends Error {
  readonly code: 'HTTP_BUSY' | 'HTTP_QUERY_TIMEOUT'
}

/** Whether `err` is the error {@link QueryGate} reports for a refused or timed-out query. */
export function isQueryLimitError(err: unknown): err is QueryLimitError {
  return err instanceof Error && err.name === 'QueryLimitError'
}

/** The error {@link QueryGate} hands to `onError` for a refused or timed-out query. */
export function limitError(code: QueryLimitError['code'], message: string): QueryLimitError {
  const err = new Error(message) as Error & { code: QueryLimitError['code'] }
  err.name = 'QueryLimitError'
  err.code = code
  return err
}

