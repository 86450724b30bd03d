/**
 * Batch as-of: many symbols at many times, answered from
 * one source (one consistent view) with one walk per symbol over the sorted
 * times (kernels/batch-as-of.ts). Not a row of `FORMS`: its query is not a
 * `GET /prices` parameter set (it has its own path and a body), its answer is
 * keyed by symbol then time with an age per entry, and its reads differ per
 * time, not per symbol, which a `QueryPlan`'s shared `reads` cannot say
 * (docs/semantics.md, "Batch as-of").
 */
import { describeValue } from '../../errors.js'
import { throwIfAborted } from '../../rules/abort.js'
import { fail } from '../../rules/query-errors.js'
import type { AsOfDirection, Limits, PriceRecord } from '../../types.js'
import { batchRowsOf } from '../kernels/batch-as-of.js'
import type { ReadScope } from '../read-scope.js'
import type { ScanRow, ScanSource } from '../scan-source.js'
import { optionsObject, symbolList, toSeveralQuery, validityOf } from '../typed-queries.js'
import { timesInOrder } from '../valid-until.js'

/** The most times one batch may hold (a list, or the points of a grid). */
export const MAX_BATCH_TIMES = 10_000
/** The most entries (symbols × times) one batch may hold. */
export const MAX_BATCH_ENTRIES = 100_000

/** A grid of as-of times: `from`, `from + interval`, … up to and including `to` when it falls on the grid. */
export interface BatchTimeGrid {
  readonly from: number
  readonly to: number
  readonly interval: number
}

/** Options of `PriceStore.batchAsOf`. Give `times` or `grid`, not both. */
export interface BatchAsOfOptions {
  /** Distinct symbols (at least one). */
  readonly symbols: readonly string[]
  /** The as-of times, integer ms since the epoch (at least one; repeats are merged). */
  readonly times?: readonly number[]
  /** The as-of times as a grid. */
  readonly grid?: BatchTimeGrid
  /** As the as-of form: `before` (default), `after` or `nearest`. */
  readonly direction?: AsOfDirection
  /** As the as-of form: the most ms the record may lie from the time. */
  readonly tolerance?: number
  /** `true`: each entry's record carries `validUntil` (docs/semantics.md, "Validity windows"). */
  readonly validUntil?: boolean
  readonly signal?: AbortSignal
  /** What the batch may see (see `QueryOptions.scope`). */
  readonly scope?: ReadScope
}

/** One entry of a batch: the record in force at the time, and its age `time − record.timestamp` (ms). */
export interface BatchAsOfEntry {
  readonly record: PriceRecord
  /** `time − record.timestamp`: ≥ 0 for a record before the time, ≤ 0 for one after it. */
  readonly age: number
}

/**
 * The answer: keyed by symbol (in the order given), then by time (ascending, as a decimal string);
 * `null` where no record qualifies.
 */
export type BatchAsOfAnswer = Record<string, Record<string, BatchAsOfEntry | null>>

/** A validated batch: distinct symbols in order, times ascending and distinct. */
export interface BatchQuery {
  readonly symbols: readonly string[]
  readonly times: readonly number[]
  readonly direction: AsOfDirection
  readonly tolerance?: number
  /** Present (true) only when asked: each entry's record carries `validUntil`. */
  readonly validUntil?: true
}

/**
 * Validates a batch before anything is read.
 * @throws PriceStoreError `PRICE_INVALID_QUERY` naming the parameter, `PRICE_INVALID_SYMBOL`
 */
export function toBatchQuery(rawOptions: unknown, limits: Limits): BatchQuery {
  const options = optionsObject<BatchAsOfOptions>(rawOptions)
  const { symbols } = options
  if (!Array.isArray(symbols) || symbols.length === 0) throw fail('PRICE_INVALID_QUERY', 'symbols', 'symbols must be a non-empty array')
  if (new Set(symbols).size !== symbols.length) throw fail('PRICE_INVALID_QUERY', 'symbols', 'symbols must be distinct')
  const list = symbolList(symbols, limits)
  const times = batchTimes(options)
  if (list.length * times.length > MAX_BATCH_ENTRIES) throw fail('PRICE_INVALID_QUERY', 'symbols', `symbols × times may hold at most ${MAX_BATCH_ENTRIES} entries (got ${list.length} × ${times.length})`)
  // The several form's as-of rules check direction and tolerance, so both forms refuse the same input.
  const asOf = toSeveralQuery(list, { to: times[0], direction: options.direction, tolerance: options.tolerance }, limits).asOf
  const direction = asOf?.direction ?? 'before'
  return Object.freeze({ symbols: list, times: Object.freeze(times), direction, ...(asOf?.tolerance === undefined ? {} : { tolerance: asOf.tolerance }), ...validityOf(options) })
}

/** The batch's times, sorted and distinct, after checking them. @throws PriceStoreError `PRICE_INVALID_QUERY` */
export function batchTimes(options: Pick<BatchAsOfOptions, 'times' | 'grid'>): number[] {
  const { times, grid } = options
  if ((times === undefined) === (grid === undefined)) throw fail('PRICE_INVALID_QUERY', 'times', 'give exactly one of times and grid')
  if (times !== undefined) {
    if (!Array.isArray(times) || times.length === 0) throw fail('PRICE_INVALID_QUERY', 'times', 'times must be a non-empty array')
    if (times.length > MAX_BATCH_TIMES) throw fail('PRICE_INVALID_QUERY', 'times', `times may hold at most ${MAX_BATCH_TIMES} entries (got ${times.length})`)
    for (const t of times) if (!isTime(t)) throw fail('PRICE_INVALID_QUERY', 'times', `times must be non-negative safe integers (ms) (got ${describeValue(t)})`)
    return [...new Set(times)].sort((a, b) => a - b)
  }
  if (typeof grid !== 'object' || grid === null) throw fail('PRICE_INVALID_QUERY', 'grid', 'grid must be an object { from, to, interval }')
  const { from, to, interval } = grid
  if (!isTime(from) || !isTime(to) || from > to) throw fail('PRICE_INVALID_QUERY', 'grid', 'grid needs non-negative integer grid.from ≤ grid.to (fromTimestamp ≤ toTimestamp over HTTP)')
  if (!Number.isSafeInteger(interval) || interval <= 0) throw fail('PRICE_INVALID_QUERY', 'interval', 'interval must be a positive integer (ms)')
  if (Math.floor((to - from) / interval) + 1 > MAX_BATCH_TIMES) throw fail('PRICE_INVALID_QUERY', 'grid', `a grid may hold at most ${MAX_BATCH_TIMES} times`)
  const out: number[] = []
  for (let t = from; t <= to; t += interval) out.push(t)
  return out
}

function isTime(t: unknown): t is number {
  return Number.isSafeInteger(t) && (t as number) >= 0
}

/**
 * The work of a batch for the query gate, in records as `costOf` counts
 * them: one seek per entry and side looked at (each returns at most one record).
 */
export function batchCost(query: BatchQuery): number {
  return query.symbols.length * query.times.length * (query.direction === 'nearest' ? 2 : 1)
}

/**
 * The rows of a batch, one symbol at a time (in the query's order), each
 * the row chosen at every time (in the query's order) or `undefined`. The
 * source must stay one view for the whole walk.
 * @throws PriceStoreError `PRICE_ABORTED` when `signal` aborts (checked between symbols)
 */
export async function* batchRows(query: BatchQuery, source: ScanSource, signal?: AbortSignal): AsyncGenerator<{ readonly symbol: string; readonly rows: readonly (ScanRow | undefined)[] }> {
  for (const symbol of query.symbols) {
    throwIfAborted(signal)
    yield { symbol, rows: await batchRowsOf(source, symbol, query.times, query.direction, query.tolerance) }
  }
}

/**
 * Answers a batch from one source, keyed by symbol then time.
 * @throws PriceStoreError `PRICE_ABORTED`, and `PRICE_CORRUPT_VALUE` from a row's decoding
 */
export async function runBatch(query: BatchQuery, source: ScanSource, signal?: AbortSignal): Promise<BatchAsOfAnswer> {
  const answer: BatchAsOfAnswer = {}
  const keys = query.times.map(String)
  for await (const { symbol, rows } of batchRows(query, source, signal)) {
    const entries: Record<string, BatchAsOfEntry | null> = {}
    const until = query.validUntil === true ? await validUntilOfRows(source, symbol, rows) : undefined
    for (let i = 0; i < keys.length; i++) {
      const row = rows[i]
      const record = row === undefined ? undefined : until === undefined ? row.record() : { ...row.record(), validUntil: until[i] as number | null }
      setOwn(entries, keys[i] as string, row === undefined ? null : { record: record as PriceRecord, age: (query.times[i] as number) - row.timestamp })
    }
    // Symbols are data, not property names: `__proto__` or `constructor` must stay plain entries.
    setOwn(answer, symbol, entries)
  }
  return answer
}

/** The `validUntil` of each chosen row, `undefined` where none was chosen. */
async function validUntilOfRows(source: ScanSource, symbol: string, rows: readonly (ScanRow | undefined)[]): Promise<(number | null | undefined)[]> {
  const chosen = rows.filter((row): row is ScanRow => row !== undefined)
  const times = await timesInOrder(source, symbol, chosen.map((row) => ({ timestamp: row.timestamp, id: (row.ref?.() ?? row.record()).id })))
  let next = 0
  return rows.map((row) => (row === undefined ? undefined : times[next++]))
}

function setOwn<T>(target: Record<string, T>, key: string, value: T): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true })
}
