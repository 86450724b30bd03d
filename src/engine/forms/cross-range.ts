import type { CrossRangeQuery, CrossSample } from '../../types.js'
import { bucketStart } from '../grid.js'
import { CrossWalk } from '../kernels/cross-rate.js'
import { rowsToSample } from '../kernels/sample.js'
import type { PlanOf } from '../query-plan.js'
import type { ScanSource } from '../scan-source.js'
import { bucketWindow, legsRead, pageBuckets, readLegs, seriesReads } from './cross-legs.js'
import type { QueryForm } from './query-form.js'

/**
 * A cross-rate range: every bucket of the grid (then `offset` and `limit`),
 * oldest first, each the rate in force at the bucket's last millisecond
 * (clipped to `to`), or its refusal. Each leg is read once, as its bucket
 * heads when the source has them (only a bucket's latest record matters),
 * and the two are merged in one pass.
 */
export const crossRange: QueryForm<CrossRangeQuery> = {
  answerForm: () => 'crossRange',
  symbols: (query) => [query.quote, query.base],
  reads: (query) => seriesReads(query.from, query.to),
  cost: (plan, counts) => pageBuckets(plan.query, plan.maxRangePoints).count + legsRead(plan.query, counts, plan.query),
  run: crossSamples,
  // A list of the grid's buckets, paged as the single-symbol range and candles; no `fields`: the legs are record references already.
  paging: { resumesAfter: 'bucket' },
}

async function crossSamples(plan: PlanOf<CrossRangeQuery>, source: ScanSource): Promise<CrossSample[]> {
  const { query } = plan
  const page = pageBuckets(query, plan.maxRangePoints)
  const legs = await readLegs(plan, source, (symbol) => rowsToSample(source, symbol, query))
  const walk = new CrossWalk(legs.quote, legs.base, query.maxAge)
  const samples: CrossSample[] = []
  for (let index = page.first; index < page.first + page.count; index++) {
    const { end } = bucketWindow(query, index)
    samples.push({ bucket: bucketStart(query, index), at: end, ...walk.at(end) })
  }
  return samples
}
