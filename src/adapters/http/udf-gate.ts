import type { QueryPlan } from '../../engine/plan.js'
import type { PriceAnswer, QueryParams } from '../../types.js'
import type { AnswerOptions, HttpAnswer, PricesQueryable } from './answer.js'
import type { GateRequest, QueryGate } from './query-gate.js'
import type { HistoryPlan } from './udf-history.js'
import { asUdfError, type UdfOptions } from './udf.js'

/**
 * A `runHistory` for {@link answerUdf} that sends each history read through
 * `gate`, weighed by `store` as the `/prices` query reading the same
 * records: candles over the plan's window (heavy, as every bucketed form),
 * or only the newest record before it (light). A store that makes no plans
 * has every read weighed heavy, as its `/prices` queries are. So chart
 * requests share the cap, the line and the time budget with `/prices`. The
 * gate's own answers (503 `HTTP_BUSY`, `HTTP_QUERY_TIMEOUT`) come back in
 * UDF's error shape.
 */
export function historyThroughGate(
  gate: QueryGate,
  store: PricesQueryable,
  options: AnswerOptions,
  request: GateRequest,
): NonNullable<UdfOptions['runHistory']> {
  return (plan, read) => {
    const job = new GatedRead(read, store)
    return gate.answer(job, equivalentQuery(plan), options, request).then((answer) => {
      // 200 only once the read has ended: the gate then answered with the read's placeholder.
      if (answer.status === 200 && job.answer !== undefined) return job.answer
      return asUdfError(answer)
    })
  }
}

/** The `/prices` parameters that read what the plan reads; the store weighs them for the gate. */
function equivalentQuery(plan: HistoryPlan): URLSearchParams {
  const params = new URLSearchParams({ symbol: plan.symbol })
  if (plan.window !== undefined) {
    params.set('fromTimestamp', String(plan.window.from))
    params.set('toTimestamp', String(plan.window.to))
    params.set('interval', String(plan.grid.interval))
    params.set('origin', String(plan.grid.origin))
    params.set('aggregate', 'candles')
  } else if (plan.start > 0) {
    params.set('toTimestamp', String(plan.start - 1))
  }
  return params
}

/**
 * The gate runs `PricesQueryable` work and serialises its answer as JSON; a
 * UDF read already has its answer, so it is kept aside here and the gate
 * serialises an empty array in its place. The store's own `plan` weighs it.
 */
class GatedRead implements PricesQueryable {
  answer: HttpAnswer | undefined
  readonly plan?: (params: QueryParams) => QueryPlan
  readonly run?: () => Promise<PriceAnswer>
  readonly cost?: (plan: QueryPlan) => number
  readonly #read: () => Promise<HttpAnswer>

  constructor(read: () => Promise<HttpAnswer>, store: PricesQueryable) {
    this.#read = read
    if (store.plan !== undefined && store.run !== undefined) {
      this.plan = (params) => store.plan!(params)
      this.run = () => this.query()
      if (store.cost !== undefined) this.cost = (plan) => store.cost!(plan)
    }
  }

  query(): Promise<PriceAnswer> {
    return this.#read().then((answer) => {
      this.answer = answer
      return []
    })
  }
}
