import type { PriceAnswer } from '../../types.js'
import type { AnswerOptions, HttpAnswer, PricesQueryable } from './answer.js'
import type { GateRequest, QueryGate } from './query-gate.js'
import type { HistoryPlan } from './udf-history.js'
import { asUdfError, type UdfOptions } from './udf.js'

/**
 * A `runHistory` for {@link answerUdf} that sends each history read through
 * `gate`, weighed as the `/prices` query reading the same records: candles
 * over the plan's window (heavy, like every query with `interval`), or only
 * the newest record before it (light). So chart requests share the cap, the
 * line and the time budget with `/prices`. The gate's own answers (503
 * `HTTP_BUSY`, `HTTP_QUERY_TIMEOUT`) come back in UDF's error shape.
 */
export function historyThroughGate(gate: QueryGate, options: AnswerOptions, request: GateRequest): NonNullable<UdfOptions['runHistory']> {
  return (plan, read) => {
    const job = new GatedRead(read)
    return gate.answer(job, equivalentQuery(plan), options, request).then((answer) => {
      // 200 only once the read has ended: the gate then answered with the read's placeholder.
      if (answer.status === 200 && job.answer !== undefined) return job.answer
      return asUdfError(answer)
    })
  }
}

/** The `/prices` parameters that read what the plan reads; the gate weighs a query by them. */
function equivalentQuery(plan: HistoryPlan): URLSearchParams {
  const params = new URLSearchParams({ symbol: plan.symbol })
  if (plan.window !== undefined) {
    params.set('fromTimestamp', String(plan.window.from))
    params.set('toTimestamp', String(plan.window.to))
    params.set('interval', String(plan.grid.interval))
    params.set('aggregate', 'candles')
  }
  return params
}

/**
 * The gate runs `PricesQueryable` work and serialises its answer as JSON; a
 * UDF read already has its answer, so it is kept aside here and the gate
 * serialises an empty array in its place.
 */
class GatedRead implements PricesQueryable {
  answer: HttpAnswer | undefined

  constructor(readonly read: () => Promise<HttpAnswer>) {}

  query(): Promise<PriceAnswer> {
    return this.read().then((answer) => {
      this.answer = answer
      return []
    })
  }
}
