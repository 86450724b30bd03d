import type { CandlesQuery, RangeQuery } from '../../types.js'
import { throwIfAborted } from '../../rules/abort.js'
import { abortableSource } from '../abortable-source.js'
import type { QueryPlan } from '../query-plan.js'
import type { ScanRow, ScanSource } from '../scan-source.js'
import type { QueryOptions } from '../query-options.js'
import { GapFiller, type FillSpan } from './gap-fill.js'
import { carryRow, type Rows } from './rows.js'

/** The query of a bucketed form: one symbol, a grid, paging, optional gap fill. */
export type BucketedQuery = RangeQuery | CandlesQuery

/** Rows in, buckets out: calls its `emit` with each bucket's index, item and closing row. */
export interface BucketFeed {
  /** Takes the next row (ascending order); false once stopped. */
  push(row: ScanRow): boolean
  /** Emits the last bucket, unless stopped. */
  flush(): void
}

/** What a bucketed form tells the shared stream: the rows it reads, how they become buckets, and each bucket's item. */
export interface BucketedForm<Q extends BucketedQuery, T, Item> {
  /** The rows the form reads of the query's symbol, ascending. */
  rows(plan: QueryPlan, query: Q, source: ScanSource): Rows
  /** The feed building the buckets; `emit` returns false to stop it. */
  feed(query: Q, emit: (bucket: number, item: T, close: ScanRow) => boolean): BucketFeed
  /** Makes the answer's item for bucket `index` of a span (chosen once per stream). */
  itemOf(query: Q): (span: FillSpan<T>, index: number) => Item
}

/**
 * A bucketed form (with or without gap fill) as a stream, without a cap:
 * oldest first. With `options.signal`, an abort stops the reads at their
 * next batch, and no item is yielded after it.
 * @throws PriceStoreError `PRICE_ABORTED` when `options.signal` aborts
 */
export async function* streamBucketed<Q extends BucketedQuery, T, Item>(
  form: BucketedForm<Q, T, Item>, plan: QueryPlan, rawSource: ScanSource, options: QueryOptions,
): AsyncGenerator<Item> {
  const { signal } = options
  throwIfAborted(signal)
  const source = signal === undefined ? rawSource : abortableSource(rawSource, signal)
  const query = plan.query as Q
  const carry = query.fill === undefined ? undefined : await carryRow(source, query.symbol, plan)
  // One generator, so each item costs one promise hop, not one per layer. Spans are
  // expanded one bucket at a time, so a long carried run never sits in memory whole.
  let ready: FillSpan<T>[] = []
  const take = (span: FillSpan<T>): boolean => ready.push(span) > 0
  const filler = query.fill === undefined ? undefined : new GapFiller<T>(query, query.fill, carry, take)
  const emit = (bucket: number, item: T, close: ScanRow): boolean =>
    filler === undefined ? take({ first: bucket, last: bucket, row: close, carried: false, item }) : filler.push(bucket, close, item)
  const feed = form.feed(query, emit)
  const rows = form.rows(plan, query, source)
  const itemOf = form.itemOf(query)
  for await (const batch of Array.isArray(rows) ? [rows as readonly ScanRow[]] : (rows as AsyncIterable<readonly ScanRow[]>)) {
    for (const row of batch) feed.push(row)
    const out = ready
    ready = []
    for (const span of out) yield* itemsOf(span, itemOf, signal)
  }
  feed.flush()
  filler?.finish()
  for (const span of ready) yield* itemsOf(span, itemOf, signal)
}

/**
 * The answer's items for one span of a bucketed form, one bucket at a time.
 * The signal is checked before each: a consumer that resumes after an abort
 * gets the error, not the rest of a batch or of a long carried run.
 */
function* itemsOf<T, Item>(span: FillSpan<T>, itemOf: (span: FillSpan<T>, index: number) => Item, signal: AbortSignal | undefined): Generator<Item> {
  throwIfAborted(signal)
  for (let index = span.first; index <= span.last; index++) {
    if (index > span.first) throwIfAborted(signal)
    yield itemOf(span, index)
  }
}
