import type { Candle, CandlesQuery, EmptyCandle } from '../../types.js'
import { countedAnswer, countedBuckets, countedCandle } from './counted.js'
import { streamBucketed, type BucketedForm } from '../kernels/bucket-stream.js'
import { CandleBuilder, carriedCandle } from '../kernels/candles.js'
import { GapFiller, type FillSpan } from '../kernels/gap-fill.js'
import { Page } from '../kernels/paging.js'
import { carryRow, forEachRow, readOf, rowsOf } from '../kernels/rows.js'
import { selectCandles, selectCountedCandles } from '../kernels/select-fields.js'
import type { PlanOf } from '../query-plan.js'
import type { ScanSource } from '../scan-source.js'
import { bucketedCost, bucketedReads, bucketsChosen } from '../kernels/bucketed.js'
import type { QueryForm } from './query-form.js'

/** Candles: open, high, low, close and count per bucket, gap-filled when asked, then `offset` and `limit`, oldest first. */
export const candles: QueryForm<CandlesQuery> = {
  answerForm: (query) => (query.fill?.mode === 'none' ? 'countedCandles' : 'candles'),
  symbols: (query) => [query.symbol],
  reads: bucketedReads,
  cost: (plan, counts) => {
    const { query } = plan
    const records = counts.records(query.symbol, query.from, query.to)
    return bucketedCost(query, bucketsChosen(query, records), records)
  },
  run: (plan, source) => (plan.query.fill?.mode === 'none' ? countedAnswer(plan, source, countedCandle) : candleAnswer(plan, source)),
  stream: (plan, source, options) =>
    plan.query.fill?.mode === 'none' ? streamBucketed(COUNTED_CANDLES, plan, source, options) : streamBucketed(CANDLE_BUCKETS, plan, source, options),
  selectFields: (answer, query, select) => (query.fill?.mode === 'none' ? selectCountedCandles(answer, select) : selectCandles(answer, select)),
  // A list of buckets, resumed after the page's last bucket.
  paging: { resumesAfter: 'bucket' },
}

/** The candles' buckets with `fill=none`: every bucket, empty ones with `count: 0`. */
const COUNTED_CANDLES = countedBuckets<CandlesQuery, Candle | EmptyCandle>(countedCandle)

/** The candles form's buckets for the stream: each bucket's candle, or a flat carried one. */
const CANDLE_BUCKETS: BucketedForm<CandlesQuery, Candle, Candle> = {
  rows: (plan, query, source) => rowsOf(source, query.symbol, { ...readOf(plan, 'main'), refs: true }),
  feed: (query, emit) => new CandleBuilder(query, emit),
  itemOf: (query) => (span, index) => span.item ?? carriedCandle(query, index, span.row!),
}

async function candleAnswer(plan: PlanOf<CandlesQuery>, source: ScanSource): Promise<Candle[]> {
  const { query } = plan
  const page = new Page<FillSpan<Candle>>(query, plan.maxRangePoints)
  const fill = query.fill
  const filler = fill === undefined ? undefined : new GapFiller<Candle>(query, fill, await carryRow(source, query.symbol, plan), (span) => page.addSpan(span))
  const builder = new CandleBuilder(query, (bucket, candle, close) =>
    filler === undefined ? page.addSpan({ first: bucket, last: bucket, row: close, carried: false, item: candle }) : filler.push(bucket, close, candle))
  // Candles read each row's id, timestamp and value alone (the carried row of a gap too): no record body.
  await forEachRow(rowsOf(source, query.symbol, { ...readOf(plan, 'main'), refs: true }), (row) => builder.push(row))
  builder.flush()
  filler?.finish()
  return page.finishSpans().flatMap(([span, first, last]) => candlesOf(query, span, first, last))
}

/** The candles of buckets `first..last` of a span: the bucket's own, or flat carried ones. */
function candlesOf(query: CandlesQuery, span: FillSpan<Candle>, first: number, last: number): Candle[] {
  if (span.item !== undefined) return [span.item]
  const out: Candle[] = []
  for (let index = first; index <= last; index++) out.push(carriedCandle(query, index, span.row!))
  return out
}
