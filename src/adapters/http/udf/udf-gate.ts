import type { QueryPlan } from '../../../engine/query-plan.js'
import type { QueryParams } from '../../../types.js'
import type { GateJob, QueryGate } from '../admission/query-gate.js'
import type { QueryLimitError } from '../admission/query-limits.js'
import type { StoreSupports } from '../capabilities.js'
import type { HttpAnswer } from '../core/answer.js'
import { weighPlan, type PricesQueryable } from '../prices/answer.js'
import type { PricesRequest } from '../prices/through-gate.js'
import type { HistoryPlan } from './udf-history.js'
import { udfErrorAnswer, udfFailure, type UdfOptions } from './udf.js'

/**
 * A `runHistory` for {@link answerUdf} that sends each history read through
 * `gate` as a job of its own: weighed by `store` as it weighs the `/prices`
 * query reading the same records (candles over the plan's window, heavy as
 * every bucketed form, or only the newest record before it, light). A store
 * that makes no plans has every read weighed heavy, as its `/prices` queries
 * are. So chart requests share the cap, the line and the time budget with
 * `/prices`. The gate's own answers (503 `HTTP_BUSY`, `HTTP_QUERY_TIMEOUT`)
 * come in UDF's error shape.
 */
export function historyThroughGate(
  gate: QueryGate,
  store: PricesQueryable,
  supports: StoreSupports,
  options: UdfOptions,
  request: PricesRequest,
): NonNullable<UdfOptions['runHistory']> {
  return (plan, read) => {
    let cost: number
    try {
      cost = historyCost(store, supports, plan, request)
    } catch (err) {
      return Promise.resolve(udfFailure(options, err)) // e.g. an answer sure to be over the cap: nothing is read
    }
    return gate.admit(new HistoryJob(cost, read, options), options, request)
  }
}

/** The cost of a history read, as the store weighs the `/prices` query reading the same records; infinite for a store without plans. */
function historyCost(store: PricesQueryable, supports: StoreSupports, plan: HistoryPlan, request: PricesRequest): number {
  if (!supports.plans) return Number.POSITIVE_INFINITY
  const planned = (store.plan as (params: QueryParams) => QueryPlan)(historyQuery(plan))
  const cost = weighPlan(store, planned, supports)
  request.planned?.(planned) // once weighed, as a `/prices` query is labelled
  return cost
}

/**
 * The query parameters that read what a history plan reads: the store plans
 * and weighs them as it does `/prices`, and the plan labels the request's
 * metrics. Only weighed: the read itself is the history's own.
 */
function historyQuery(plan: HistoryPlan): Record<string, string> {
  if (plan.window !== undefined) {
    return {
      symbol: plan.symbol,
      fromTimestamp: String(plan.window.from),
      toTimestamp: String(plan.window.to),
      interval: String(plan.grid.interval),
      origin: String(plan.grid.origin),
      aggregate: 'candles',
    }
  }
  return plan.start > 0 ? { symbol: plan.symbol, toTimestamp: String(plan.start - 1) } : { symbol: plan.symbol }
}

/** One history read as the gate's job. */
class HistoryJob implements GateJob {
  constructor(
    readonly cost: number,
    readonly read: () => Promise<HttpAnswer>,
    readonly options: UdfOptions,
  ) {}

  run(): Promise<HttpAnswer> {
    let answer: Promise<HttpAnswer>
    try {
      answer = this.read()
    } catch (err) {
      return Promise.resolve(udfFailure(this.options, err))
    }
    return answer.then(undefined, (err: unknown) => udfFailure(this.options, err))
  }

  refusal(code: QueryLimitError['code'], message: string): HttpAnswer {
    return udfErrorAnswer(503, code, message, { 'retry-after': '1' })
  }
}
