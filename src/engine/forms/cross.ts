import type { CrossAtQuery, CrossRate, RecordRef } from '../../types.js'
import { crossOutcome } from '../kernels/cross-rate.js'
import { firstRow, readOf, refOf } from '../kernels/rows.js'
import { frozenReads, type PlanOf } from '../query-plan.js'
import type { ScanSource } from '../scan-source.js'
import { refuseUnknown } from './cross-legs.js'
import type { QueryForm } from './query-form.js'

/**
 * The cross rate at one time (docs/semantics.md, "Cross rates"): each leg is
 * its symbol's newest record (at or before `to`, for an as-of), read with
 * one newest-first seek per leg, the two from one view of the store.
 */
export const cross: QueryForm<CrossAtQuery> = {
  answerForm: () => 'cross',
  symbols: (query) => [query.quote, query.base],
  reads: (query) => frozenReads([{ role: 'main', ...(query.to === undefined ? {} : { to: query.to }), reverse: true, limit: 1 }]),
  cost: () => 2,
  run: crossRate,
}

async function crossRate(plan: PlanOf<CrossAtQuery>, source: ScanSource): Promise<CrossRate> {
  const { query } = plan
  const read = readOf(plan, 'main')
  const [quote, base] = await Promise.all([query.quote, query.base].map((symbol) => firstRow(source, symbol, read)))
  const legs = [quote, base].map((row) => (row === undefined ? undefined : refOf(row))) as [RecordRef | undefined, RecordRef | undefined]
  await refuseUnknown(query, source, legs[0] === undefined ? [] : [legs[0]], legs[1] === undefined ? [] : [legs[1]])
  return { quote: query.quote, base: query.base, ...(query.to === undefined ? {} : { at: query.to }), ...crossOutcome(legs[0], legs[1], query.maxAge) }
}
