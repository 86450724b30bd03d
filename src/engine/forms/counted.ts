import type { Candle, CandlesQuery, CountedBucket, EmptyCandle, RangeQuery } from '../../types.js'
import { bucketStart } from '../grid.js'
import type { BucketedForm } from '../kernels/bucket-stream.js'
import { CandleBuilder } from '../kernels/candles.js'
import { GapFiller, type FillSpan } from '../kernels/gap-fill.js'
import { Page } from '../kernels/paging.js'
import { carryRow, forEachRow, readOf, rowsOf } from '../kernels/rows.js'
import { sampledRecord } from '../kernels/sample.js'
import type { PlanOf } from '../query-plan.js'
import type { ScanSource } from '../scan-source.js'

/*
 * Empty buckets made explicit (`fill=none`) for the range and candles forms:
 * every bucket of the grid appears. Both build candles (the range needs each
 * bucket's count as well as its close, so it reads every row, not bucket
 * heads), and the gap filler in `none` mode emits spans of empty buckets.
 */

/** The empty bucket `index` of an empty span: `count: 0`, and `beforeFirst` before the symbol's first record. */
export function emptyBucket(query: RangeQuery | CandlesQuery, span: FillSpan<unknown>, index: number): EmptyCandle {
  const bucket = bucketStart(query, index)
  return span.empty?.beforeFirst === true ? { bucket, count: 0, beforeFirst: true } : { bucket, count: 0 }
}

/** The range's item of bucket `index`: its latest record and count, or an empty bucket. */
export function countedPoint(query: RangeQuery, span: FillSpan<Candle>, index: number): CountedBucket {
  const candle = span.item
  if (candle === undefined || span.row === undefined) return emptyBucket(query, span, index)
  return { bucket: candle.bucket, count: candle.count, record: sampledRecord(span.row) }
}

/** The candles' item of bucket `index`: its candle, or an empty one. */
export function countedCandle(query: CandlesQuery, span: FillSpan<Candle>, index: number): Candle | EmptyCandle {
  return span.item ?? emptyBucket(query, span, index)
}

/** The `fill=none` forms' buckets for the stream: candles built from every row, then turned into the form's item. */
export function countedBuckets<Q extends RangeQuery | CandlesQuery, Item>(
  itemOf: (query: Q, span: FillSpan<Candle>, index: number) => Item,
): BucketedForm<Q, Candle, Item> {
  return {
    rows: (plan, query, source) => rowsOf(source, query.symbol, readOf(plan, 'main')),
    feed: (query, emit) => new CandleBuilder(query, emit),
    itemOf: (query) => (span, index) => itemOf(query, span, index),
  }
}

/** A `fill=none` answer: every bucket, counted against the cap per span, then `offset` and `limit`. */
export async function countedAnswer<Q extends RangeQuery | CandlesQuery, Item>(
  plan: PlanOf<Q>, source: ScanSource, itemOf: (query: Q, span: FillSpan<Candle>, index: number) => Item,
): Promise<Item[]> {
  const { query } = plan
  const page = new Page<FillSpan<Candle>>(query, plan.maxRangePoints)
  const filler = new GapFiller<Candle>(query, query.fill!, await carryRow(source, query.symbol, plan), (span) => page.addSpan(span))
  const builder = new CandleBuilder(query, (bucket, candle, close) => filler.push(bucket, close, candle))
  await forEachRow(rowsOf(source, query.symbol, readOf(plan, 'main')), (row) => builder.push(row))
  builder.flush()
  filler.finish()
  const out: Item[] = []
  for (const [span, first, last] of page.finishSpans()) for (let index = first; index <= last; index++) out.push(itemOf(query, span, index))
  return out
}
