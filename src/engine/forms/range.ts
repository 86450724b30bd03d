import type { CountedBucket, FilledPoint, RangeQuery, SampledRecord } from '../../types.js'
import { countedAnswer, countedBuckets, countedPoint } from './counted.js'
import type { DataCounts } from '../data-counts.js'
import { DeferredAnswer } from '../deferred-answer.js'
import { bucketOf } from '../grid.js'
import { streamBucketed, type BucketedForm } from '../kernels/bucket-stream.js'
import { GapFiller, bucketAge, type FillSpan } from '../kernels/gap-fill.js'
import { Page, pageOf, rangeTooLarge } from '../kernels/paging.js'
import { carryRow, forEachRow } from '../kernels/rows.js'
import { BucketSampler, rowsToSample, sampledRecord } from '../kernels/sample.js'
import { selectCountedPoints, selectFilledPoints, selectRecords } from '../kernels/select-fields.js'
import type { PlanOf } from '../query-plan.js'
import type { ScanRow, ScanSource } from '../scan-source.js'
import { bucketedCost, bucketedReads, bucketsChosen } from '../kernels/bucketed.js'
import type { QueryForm } from './query-form.js'

/**
 * The range form: one record per bucket (the bucket's latest), sampled,
 * then `offset`, then `limit`, oldest first. With gap fill (`fill`), one
 * point per bucket, carried records marked: the answer form `filled`.
 */
export const range: QueryForm<RangeQuery> = {
  answerForm: (query) => (query.fill === undefined ? 'range' : query.fill.mode === 'none' ? 'counted' : 'filled'),
  symbols: (query) => [query.symbol],
  reads: bucketedReads,
  cost: rangeCost,
  run: (plan, source) =>
    plan.query.fill === undefined ? rangeRecords(plan, source) : plan.query.fill.mode === 'none' ? countedAnswer(plan, source, countedPoint) : filledRange(plan, source),
  stream: (plan, source, options) =>
    plan.query.fill?.mode === 'none' ? streamBucketed(COUNTED_BUCKETS, plan, source, options) : streamBucketed(RANGE_BUCKETS, plan, source, options),
  // As the answer's form: sampled records, gap-filled points or counted buckets.
  selectFields: (answer, query, select) =>
    query.fill === undefined ? selectRecords(answer, select) : query.fill.mode === 'none' ? selectCountedPoints(answer, select) : selectFilledPoints(answer, select),
  // A list of buckets (those holding records, or every one when filled), resumed after the page's last bucket.
  paging: { resumesAfter: 'bucket' },
}

/** The range's buckets with `fill=none`: every bucket, counted. */
const COUNTED_BUCKETS = countedBuckets<RangeQuery, CountedBucket>(countedPoint)

/** The range form's buckets for the stream: each bucket's latest row, or its filled point. */
const RANGE_BUCKETS: BucketedForm<RangeQuery, ScanRow, SampledRecord | FilledPoint> = {
  rows: (_plan, query, source) => rowsToSample(source, query.symbol, query),
  feed: (query, emit) => new BucketSampler(query, (row) => emit(bucketOf(query, row.timestamp), row, row)),
  itemOf: (query) => (query.fill === undefined ? (span) => sampledRecord(span.row!) : (span, index) => pointOf(query, span, index)),
}

/**
 * Counts the whole answer before decoding any of it, so an over-large
 * request is refused cheaply and with the size it would have had.
 */
async function rangeRecords(plan: PlanOf<RangeQuery>, source: ScanSource): Promise<DeferredAnswer> {
  const { query } = plan
  const page = new Page<ScanRow>(query, plan.maxRangePoints)
  const sampler = new BucketSampler(query, (row) => page.add(row))
  await forEachRow(rowsToSample(source, query.symbol, query), (row) => sampler.push(row))
  sampler.flush()
  return new DeferredAnswer(page.finish(), sampledRecord, true)
}

/** The range form with gap filling: one point per bucket, carried records marked. */
async function filledRange(plan: PlanOf<RangeQuery>, source: ScanSource): Promise<FilledPoint[]> {
  const { query } = plan
  const page = new Page<FillSpan<ScanRow>>(query, plan.maxRangePoints)
  const filler = new GapFiller<ScanRow>(query, query.fill!, await carryRow(source, query.symbol, plan), (span) => page.addSpan(span))
  const sampler = new BucketSampler(query, (row) => filler.push(bucketOf(query, row.timestamp), row, row))
  await forEachRow(rowsToSample(source, query.symbol, query), (row) => sampler.push(row))
  sampler.flush()
  filler.finish()
  return page.finishSpans().flatMap(([span, first, last]) => pointsOf(query, span, first, last))
}

/** The gap-filled points of buckets `first..last` of a span. */
function pointsOf(query: RangeQuery, span: FillSpan<ScanRow>, first: number, last: number): FilledPoint[] {
  const points: FilledPoint[] = []
  for (let index = first; index <= last; index++) points.push(pointOf(query, span, index))
  return points
}

/** The gap-filled point of bucket `index` of a span. */
function pointOf(query: RangeQuery, span: FillSpan<ScanRow>, index: number): FilledPoint {
  const record = sampledRecord(span.row!)
  const { bucket, age } = bucketAge(query, index, record.timestamp)
  return { bucket, carried: span.carried, age, record }
}

/**
 * The range's cost; the source's smaller index of bucket heads, when it has
 * one for this grid, bounds the rows read. A range sure to be refused by the
 * cap is refused here, before it waits.
 */
function rangeCost(plan: PlanOf<RangeQuery>, counts: DataCounts): number {
  const { query } = plan
  const records = counts.records(query.symbol, query.from, query.to)
  const chosen = bucketsChosen(query, records)
  if (query.fill === undefined) refuseSurelyTooLarge(plan, counts, chosen)
  // fill=none counts each bucket's records, so it reads them all, not bucket heads.
  const onGrid = query.fill?.mode === 'none' ? undefined : counts.rowsOnGrid?.(query.symbol, query)
  return bucketedCost(query, chosen, onGrid === undefined ? records : Math.min(records, onGrid))
}

/** Refuses a range whose answer, from the buckets surely held, is over the cap whatever the rest holds. */
function refuseSurelyTooLarge(plan: PlanOf<RangeQuery>, counts: DataCounts, atMost: number): void {
  const { query } = plan
  const cap = plan.maxRangePoints
  if (pageOf(atMost, query) <= cap || counts.bucketsSurelyHeld === undefined) return
  const held = counts.bucketsSurelyHeld(query.symbol, query)
  if (held === undefined) return
  const count = pageOf(held, query)
  if (count > cap) throw rangeTooLarge(count, cap, true)
}
