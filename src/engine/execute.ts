import { PriceStoreError } from '../errors.js'
import type {
  BucketGrid, Candle, CandlesQuery, FilledPoint, LatestQuery, Limits, PriceAnswer, PriceQuery, PriceRecord, RangeQuery,
  SampledRecord, SeveralQuery, Twap, TwapQuery,
} from '../types.js'
import { throwIfAborted } from '../rules/abort.js'
import { abortableSource } from './abortable-source.js'
import { CandleBuilder, carriedCandle } from './candles.js'
import { DeferredAnswer } from './deferred-answer.js'
import { GapFiller, bucketAge, type FillSpan } from './gap-fill.js'
import { bucketOf } from './grid.js'
import { planQuery, type PlannedRead, type QueryPlan, type ReadRole } from './plan.js'
import { BucketSampler, withMinutes } from './sample.js'
import type { SampleRange, ScanOptions, ScanRow, ScanSource } from './scan-source.js'
import { TwapBuilder } from './twap.js'
import type { QueryOptions } from './typed-queries.js'

/** How many per-symbol reads of the several-tokens and TWAP forms are in flight at once. */
const SEVERAL_CONCURRENCY = 64

/**
 * Answers a validated query from a scan source: the pure core shared by the
 * store's typed methods, `store.query()` and the HTTP adapter.
 * @throws PriceStoreError `PRICE_RANGE_TOO_LARGE` when a bucketed answer exceeds `limits.maxRangePoints`,
 *   `PRICE_ABORTED` when `options.signal` aborts
 */
export function executeQuery(query: PriceQuery, source: ScanSource, limits: Limits, options: QueryOptions = {}): Promise<PriceAnswer> {
  return executePlan(planQuery(query, limits.maxRangePoints), source, options)
}

/**
 * Answers a plan (see `planQuery`) from a scan source. With
 * `options.signal`, an abort stops the reads at their next batch.
 * @throws PriceStoreError `PRICE_RANGE_TOO_LARGE` when a bucketed answer exceeds the plan's `maxRangePoints`,
 *   `PRICE_ABORTED` when `options.signal` aborts
 */
export async function executePlan(plan: QueryPlan, source: ScanSource, options: QueryOptions = {}): Promise<PriceAnswer> {
  const answer = await executePlanDeferred(plan, source, options)
  return answer instanceof DeferredAnswer ? (answer.toArray() as PriceAnswer) : answer
}

/**
 * {@link executePlan}, except that the latest-N and range forms (without
 * gap fill) answer with a {@link DeferredAnswer}: their rows are chosen,
 * counted and checked against the cap, but decoded only as the caller reads
 * them. Errors and their timing are otherwise the same.
 * @throws PriceStoreError as {@link executePlan}; reading a deferred item may throw `PRICE_CORRUPT_VALUE`
 */
export function executePlanDeferred(plan: QueryPlan, source: ScanSource, options: QueryOptions = {}): Promise<PriceAnswer | DeferredAnswer> {
  const { signal } = options
  if (signal === undefined) return answerPlan(plan, source)
  try {
    throwIfAborted(signal)
  } catch (err) {
    return Promise.reject(err)
  }
  return answerPlan(plan, abortableSource(source, signal))
}

function answerPlan(plan: QueryPlan, source: ScanSource): Promise<PriceAnswer | DeferredAnswer> {
  const { query } = plan
  switch (query.kind) {
    case 'latest':
      return query.asOf === undefined ? latestRecords(query, plan, source) : asOfRecord(query, plan, source)
    case 'several':
      return severalLatest(query, plan, source)
    case 'range':
      return query.fill === undefined ? rangeRecords(query, plan, source) : filledRange(query, plan, source)
    case 'candles':
      return candles(query, plan, source)
    case 'twap':
      return twaps(query, plan, source)
  }
}

/** Newest first: `limit` records after skipping `offset`, inside the optional window. */
async function latestRecords(query: LatestQuery, plan: QueryPlan, source: ScanSource): Promise<DeferredAnswer> {
  const rows: ScanRow[] = []
  let toSkip = query.offset
  await forEachRow(rowsOf(source, query.symbol, readOf(plan, 'main')), (row) => {
    if (toSkip > 0) toSkip--
    else rows.push(row)
    return rows.length < query.limit
  })
  return new DeferredAnswer(rows, recordOf, false)
}

/** The directed or bounded as-of lookup of one symbol: its record, or `[]`. */
async function asOfRecord(query: LatestQuery, plan: QueryPlan, source: ScanSource): Promise<PriceRecord[]> {
  const now = lookupNow(source, query.symbol, plan)
  const row = now === NOT_NOW ? await lookup(source, query.symbol, plan) : now
  return row === undefined ? [] : [row.record()]
}

/** The latest (or as-of) record of each symbol, keyed by symbol; symbols without one are left out. */
async function severalLatest(query: SeveralQuery, plan: QueryPlan, source: ScanSource): Promise<Record<string, PriceRecord>> {
  const symbols = query.symbols === 'all' ? await source.symbols() : query.symbols
  const found: (ScanRow | undefined)[] = new Array(symbols.length)
  // Symbols a synchronous read cannot answer are read in batches of concurrent scans.
  const waiting: number[] = []
  symbols.forEach((symbol, i) => {
    const row = lookupNow(source, symbol, plan)
    if (row === NOT_NOW) waiting.push(i)
    else found[i] = row
  })
  await inBatches(waiting, async (i) => {
    found[i] = await lookup(source, symbols[i] as string, plan)
  })
  const entries: [string, PriceRecord][] = []
  symbols.forEach((symbol, i) => {
    const row = found[i]
    if (row !== undefined) entries.push([symbol, row.record()])
  })
  // fromEntries defines own properties, so a symbol named "__proto__" is a key, not the prototype.
  return Object.fromEntries(entries)
}

/**
 * The range form: sampled, then `offset`, then `limit`, oldest first.
 * Counts the whole answer before decoding any of it, so an over-large
 * request is refused cheaply and with the size it would have had.
 */
async function rangeRecords(query: RangeQuery, plan: QueryPlan, source: ScanSource): Promise<DeferredAnswer> {
  const page = new Page<ScanRow>(query, plan.maxRangePoints)
  const sampler = new BucketSampler(query, (row) => page.add(row))
  await forEachRow(rowsToSample(source, query.symbol, query), (row) => sampler.push(row))
  sampler.flush()
  return new DeferredAnswer(page.finish(), sampledRecord, true)
}

/** The range form with gap filling: one point per bucket, carried records marked. */
async function filledRange(query: RangeQuery, plan: QueryPlan, source: ScanSource): Promise<FilledPoint[]> {
  const page = new Page<FillSpan<ScanRow>>(query, plan.maxRangePoints)
  const filler = new GapFiller<ScanRow>(query, query.fill!, await carryRow(source, query.symbol, plan), (span) => page.addSpan(span))
  const sampler = new BucketSampler(query, (row) => filler.push(bucketOf(query, row.timestamp), row, row))
  await forEachRow(rowsToSample(source, query.symbol, query), (row) => sampler.push(row))
  sampler.flush()
  filler.finish()
  return page.finishSpans().flatMap(([span, first, last]) => pointsOf(query, span, first, last))
}

/** Candles, gap-filled when asked, then `offset` and `limit`, oldest first. */
async function candles(query: CandlesQuery, plan: QueryPlan, source: ScanSource): Promise<Candle[]> {
  const page = new Page<FillSpan<Candle>>(query, plan.maxRangePoints)
  const fill = query.fill
  const filler = fill === undefined ? undefined : new GapFiller<Candle>(query, fill, await carryRow(source, query.symbol, plan), (span) => page.addSpan(span))
  const builder = new CandleBuilder(query, (bucket, candle, close) =>
    filler === undefined ? page.addSpan({ first: bucket, last: bucket, row: close, carried: false, item: candle }) : filler.push(bucket, close, candle))
  await forEachRow(rowsOf(source, query.symbol, readOf(plan, 'main')), (row) => builder.push(row))
  builder.flush()
  filler?.finish()
  return page.finishSpans().flatMap(([span, first, last]) => candlesOf(query, span, first, last))
}

/** The time-weighted average of each symbol, keyed by symbol; symbols with no record in force are left out. */
async function twaps(query: TwapQuery, plan: QueryPlan, source: ScanSource): Promise<Record<string, Twap>> {
  const symbols = query.symbols === 'all' ? await source.symbols() : query.symbols
  const found: (Twap | undefined)[] = new Array(symbols.length)
  await inBatches(symbols.map((_, i) => i), async (i) => {
    const symbol = symbols[i] as string
    const builder = new TwapBuilder(query.from, query.to)
    for (const read of plan.reads) await forEachRow(rowsOf(source, symbol, read), (row) => (builder.push(row), true))
    found[i] = builder.finish()
  })
  const entries: [string, Twap][] = []
  symbols.forEach((symbol, i) => {
    const twap = found[i]
    if (twap !== undefined) entries.push([symbol, twap])
  })
  return Object.fromEntries(entries)
}

/** Options of the uncapped streams: the bucketed forms without `offset` and `limit`. */
type StreamQuery = RangeQuery | CandlesQuery

/**
 * A bucketed form (range, with or without gap fill, or candles) as a
 * stream, without a cap: oldest first. With `options.signal`, an abort
 * stops the reads at their next batch, and no item is yielded after it.
 * @throws PriceStoreError `PRICE_ABORTED` when `options.signal` aborts
 */
export async function* streamBuckets(plan: QueryPlan, rawSource: ScanSource, options: QueryOptions = {}): AsyncGenerator<SampledRecord | FilledPoint | Candle> {
  const { signal } = options
  throwIfAborted(signal)
  const source = signal === undefined ? rawSource : abortableSource(rawSource, signal)
  const query = plan.query as StreamQuery
  const carry = query.fill === undefined ? undefined : await carryRow(source, query.symbol, plan)
  // One generator, so each item costs one promise hop, not one per layer. Spans are
  // expanded one bucket at a time, so a long carried run never sits in memory whole.
  let ready: FillSpan<ScanRow | Candle>[] = []
  const take = (span: FillSpan<ScanRow | Candle>): boolean => ready.push(span) > 0
  const filler = query.fill === undefined ? undefined : new GapFiller<ScanRow | Candle>(query, query.fill, carry, take)
  const emit = (bucket: number, item: ScanRow | Candle, close: ScanRow): boolean =>
    filler === undefined ? take({ first: bucket, last: bucket, row: close, carried: false, item }) : filler.push(bucket, close, item)
  const feed = query.kind === 'candles'
    ? new CandleBuilder(query, (bucket, candle, close) => emit(bucket, candle, close))
    : new BucketSampler(query, (row) => emit(bucketOf(query, row.timestamp), row, row))
  const rows = query.kind === 'candles' ? rowsOf(source, query.symbol, readOf(plan, 'main')) : rowsToSample(source, query.symbol, query)
  for await (const batch of Array.isArray(rows) ? [rows as readonly ScanRow[]] : (rows as AsyncIterable<readonly ScanRow[]>)) {
    for (const row of batch) feed.push(row)
    const out = ready
    ready = []
    for (const span of out) yield* itemsOf(query, span, signal)
  }
  feed.flush()
  filler?.finish()
  for (const span of ready) yield* itemsOf(query, span, signal)
}

/**
 * The answer's items for one span of a bucketed form, one bucket at a time.
 * The signal is checked before each: a consumer that resumes after an abort
 * gets the error, not the rest of a batch or of a long carried run.
 */
function* itemsOf(query: StreamQuery, span: FillSpan<ScanRow | Candle>, signal: AbortSignal | undefined): Generator<SampledRecord | FilledPoint | Candle> {
  throwIfAborted(signal)
  if (query.kind === 'range' && query.fill === undefined) {
    yield sampledRecord(span.row)
    return
  }
  for (let index = span.first; index <= span.last; index++) {
    if (index > span.first) throwIfAborted(signal)
    if (query.kind === 'candles') yield (span.item as Candle | undefined) ?? carriedCandle(query, index, span.row)
    else yield pointOf(query, span as FillSpan<ScanRow>, index)
  }
}

/** The range form without a cap, as a stream: one record per bucket, oldest first. */
export function streamRange(source: ScanSource, symbol: string, range: SampleRange): AsyncGenerator<SampledRecord> {
  const query: RangeQuery = { kind: 'range', symbol, ...range, offset: 0 }
  return streamBuckets(planQuery(query, Number.POSITIVE_INFINITY), source) as AsyncGenerator<SampledRecord>
}

/**
 * `offset`, `limit` and the cap over a bucketed answer, counted in buckets;
 * items past the page are counted but never kept (or decoded).
 */
class Page<T> {
  readonly #offset: number
  readonly #end: number
  readonly #cap: number
  readonly #kept: [T, number, number][] = []
  #position = 0

  constructor(query: { readonly offset: number; readonly limit?: number }, cap: number) {
    this.#offset = query.offset
    this.#end = query.limit === undefined ? Number.POSITIVE_INFINITY : query.offset + query.limit
    this.#cap = cap
  }

  /** Takes one bucket's item; false once the page is full. */
  add(item: T): boolean {
    return this.#take(item, 1)
  }

  /** Takes a span of `last - first + 1` buckets; false once the page is full. */
  addSpan(span: T & { readonly first: number; readonly last: number }): boolean {
    return this.#take(span, span.last - span.first + 1)
  }

  /** The kept items. */
  finish(): T[] {
    this.#check()
    return this.#kept.map(([item]) => item)
  }

  /** The kept spans, each with the first and last of its buckets inside the page. */
  finishSpans(): [T, number, number][] {
    this.#check()
    return this.#kept
  }

  /** Keeps the part of `size` buckets inside `offset..end`; the spans' own bucket numbers are offset by `skip`. */
  #take(item: T, size: number): boolean {
    const start = this.#position
    this.#position += size
    const from = Math.max(start, this.#offset)
    const until = Math.min(this.#position, this.#end)
    if (from < until && this.#kept.length <= this.#cap) {
      const first = (item as { first?: number }).first ?? 0
      this.#kept.push([item, first + (from - start), first + (until - 1 - start)])
    }
    return this.#position < this.#end
  }

  /** Refuses an answer over the cap, with the size it would have had. */
  #check(): void {
    const count = Math.max(0, Math.min(this.#position, this.#end) - this.#offset)
    if (count > this.#cap) {
      throw new PriceStoreError(
        'PRICE_RANGE_TOO_LARGE',
        `the answer would hold ${count} records, more than the cap of ${this.#cap} (maxRangePoints); ` +
          'use a larger interval, a narrower time range, or a limit',
        { details: { parameter: 'interval', count, cap: this.#cap } },
      )
    }
  }
}

/** The gap-filled points of buckets `first..last` of a span. */
function pointsOf(grid: BucketGrid, span: FillSpan<ScanRow>, first: number, last: number): FilledPoint[] {
  const points: FilledPoint[] = []
  for (let index = first; index <= last; index++) points.push(pointOf(grid, span, index))
  return points
}

/** The gap-filled point of bucket `index` of a span. */
function pointOf(grid: BucketGrid, span: FillSpan<ScanRow>, index: number): FilledPoint {
  const record = sampledRecord(span.row)
  const { bucket, age } = bucketAge(grid, index, record.timestamp)
  return { bucket, carried: span.carried, age, record }
}

/** The candles of buckets `first..last` of a span: the bucket's own, or flat carried ones. */
function candlesOf(grid: BucketGrid, span: FillSpan<Candle>, first: number, last: number): Candle[] {
  if (span.item !== undefined) return [span.item]
  const out: Candle[] = []
  for (let index = first; index <= last; index++) out.push(carriedCandle(grid, index, span.row))
  return out
}

/** A row as the latest-N form returns it. */
function recordOf(row: ScanRow): PriceRecord {
  return row.record()
}

/** A row as the range form returns it. */
function sampledRecord(row: ScanRow): SampledRecord {
  return row.sampled?.() ?? withMinutes(row.record())
}

type Rows = readonly ScanRow[] | AsyncIterable<readonly ScanRow[]>

/** The plan's read for `role`, which its form always has. */
function readOf(plan: QueryPlan, role: ReadRole): PlannedRead {
  return findRead(plan, role) as PlannedRead
}

/** The plan's read for `role`, if it has one. A loop, not `find`: latest-1 calls it on its hot path. */
function findRead(plan: QueryPlan, role: ReadRole): PlannedRead | undefined {
  for (const read of plan.reads) if (read.role === role) return read
  return undefined
}

/** The latest record before the range, for gap filling; `undefined` when there is none or no read for it. */
async function carryRow(source: ScanSource, symbol: string, plan: QueryPlan): Promise<ScanRow | undefined> {
  const read = findRead(plan, 'carry')
  return read === undefined ? undefined : firstRow(source, symbol, read)
}

/** The rows of a scan: at once from an in-memory source, as batches otherwise. */
function rowsOf(source: ScanSource, symbol: string, options: ScanOptions): Rows {
  return source.scanNow?.(symbol, options) ?? source.scan(symbol, options)
}

/** The source's bucket heads when it has them for this grid, otherwise every row of the range. */
function rowsToSample(source: ScanSource, symbol: string, range: SampleRange): Rows {
  const { from, to, interval, origin } = range
  return source.bucketHeads?.(symbol, { from, to, interval, origin }) ?? rowsOf(source, symbol, { from, to, reverse: false })
}

const NOT_NOW = Symbol('not now')

/**
 * The record a single-record lookup (the several form, or a directed
 * as-of) picks from its reads, when every read can be answered at once;
 * {@link NOT_NOW} otherwise.
 */
function lookupNow(source: ScanSource, symbol: string, plan: QueryPlan): ScanRow | undefined | typeof NOT_NOW {
  let before: ScanRow | undefined
  let after: ScanRow | undefined
  for (const read of plan.reads) {
    const rows = source.scanNow?.(symbol, read)
    if (rows === undefined) return NOT_NOW
    if (read.role === 'after') after = rows[0]
    else before = rows[0]
  }
  return nearer(plan.query, before, after)
}

async function lookup(source: ScanSource, symbol: string, plan: QueryPlan): Promise<ScanRow | undefined> {
  let before: ScanRow | undefined
  let after: ScanRow | undefined
  for (const read of plan.reads) {
    const row = await firstRow(source, symbol, read)
    if (read.role === 'after') after = row
    else before = row
  }
  return nearer(plan.query, before, after)
}

/** Of the records found before and after the as-of time, the nearer; an equal distance goes to the one before. */
function nearer(query: PriceQuery, before: ScanRow | undefined, after: ScanRow | undefined): ScanRow | undefined {
  if (before === undefined || after === undefined) return before ?? after
  const to = (query as LatestQuery | SeveralQuery).to as number
  return to - before.timestamp <= after.timestamp - to ? before : after
}

async function firstRow(source: ScanSource, symbol: string, read: ScanOptions): Promise<ScanRow | undefined> {
  let found: ScanRow | undefined
  await forEachRow(rowsOf(source, symbol, { ...read, limit: 1 }), (row) => {
    found = row
    return false
  })
  return found
}

/** Runs `task` for each index, at most {@link SEVERAL_CONCURRENCY} at once. */
async function inBatches(indexes: readonly number[], task: (index: number) => Promise<void>): Promise<void> {
  for (let start = 0; start < indexes.length; start += SEVERAL_CONCURRENCY) {
    await Promise.all(indexes.slice(start, start + SEVERAL_CONCURRENCY).map(task))
  }
}

/**
 * Feeds rows to `take` until it returns false; leaving a scan early closes
 * it. In-memory rows are fed synchronously (no promise), which keeps the
 * hot-tail path free of extra microtask hops.
 */
function forEachRow(rows: Rows, take: (row: ScanRow) => boolean): Promise<void> | undefined {
  if (!Array.isArray(rows)) return forEachBatchedRow(rows as AsyncIterable<readonly ScanRow[]>, take)
  for (const row of rows as readonly ScanRow[]) if (!take(row)) break
  return undefined
}

async function forEachBatchedRow(batches: AsyncIterable<readonly ScanRow[]>, take: (row: ScanRow) => boolean): Promise<void> {
  for await (const batch of batches) {
    for (const row of batch) if (!take(row)) return
  }
}
