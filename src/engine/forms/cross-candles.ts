import type { CrossCandle, CrossCandlesQuery, CrossPoint, CrossRefusal } from '../../types.js'
import { bucketStart } from '../grid.js'
import { CrossWalk, derivedSeries, type TimedOutcome } from '../kernels/cross-rate.js'
import type { PlanOf } from '../query-plan.js'
import type { ScanSource } from '../scan-source.js'
import { bucketWindow, legsRead, pageBuckets, readLegs, seriesReads } from './cross-legs.js'
import type { QueryForm } from './query-form.js'

/**
 * Cross-rate candles: every bucket of the grid (then `offset` and `limit`),
 * oldest first, each the open, high, low and close of the derived series
 * inside it: the rate in force at the bucket's start (clipped to `from`),
 * then the rate after each millisecond holding a record of either leg.
 */
export const crossCandles: QueryForm<CrossCandlesQuery> = {
  answerForm: () => 'crossCandles',
  symbols: (query) => [query.quote, query.base],
  reads: (query) => seriesReads(query.from, query.to),
  cost: (plan, counts) => pageBuckets(plan.query, plan.maxRangePoints).count + legsRead(plan.query, counts),
  run: candlesOfRates,
  // A list of the grid's buckets, paged as the single-symbol range and candles; no `fields`: the legs are record references already.
  paging: { resumesAfter: 'bucket' },
}

async function candlesOfRates(plan: PlanOf<CrossCandlesQuery>, source: ScanSource): Promise<CrossCandle[]> {
  const { query } = plan
  const page = pageBuckets(query, plan.maxRangePoints)
  const legs = await readLegs(plan, source)
  const walk = new CrossWalk(legs.quote, legs.base, query.maxAge)
  const candles: CrossCandle[] = []
  for (let index = page.first; index < page.first + page.count; index++) {
    const { start, end } = bucketWindow(query, index)
    candles.push(candleOf(bucketStart(query, index), derivedSeries(walk, start, end)))
  }
  return candles
}

/** The candle of one bucket's derived series. */
function candleOf(bucket: number, series: Iterable<TimedOutcome>): CrossCandle {
  let open: CrossPoint | undefined
  let high: CrossPoint | undefined
  let low: CrossPoint | undefined
  let close: CrossPoint | undefined
  let points = 0
  let refused = 0
  let reason: CrossRefusal = 'no-quote'
  for (const { outcome } of series) {
    if (!('point' in outcome)) {
      refused++
      reason = outcome.refused
      continue
    }
    const point = outcome.point
    points++
    open ??= point
    // A tie goes to the later point, as the candles form's high and low go to the later record.
    if (high === undefined || point.value >= high.value) high = point
    if (low === undefined || point.value <= low.value) low = point
    close = point
  }
  if (open === undefined) return { bucket, points: 0, refused, reason }
  return { bucket, open, high: high as CrossPoint, low: low as CrossPoint, close: close as CrossPoint, points, refused }
}
