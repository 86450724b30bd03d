import type { QueryPlan } from '../../../engine/query-plan.js'
import { forbiddenSymbol, readerParams } from '../access/reader-request.js'
import type { GateRequest, QueryGate } from '../admission/query-gate.js'
import type { StoreSupports } from '../capabilities.js'
import type { HttpAnswer } from '../core/answer.js'
import { answerPlanned, planRequest, type AnswerOptions, type PlannedRequest, type PricesQueryable } from './answer.js'

/** Per-request inputs of {@link answerThroughGate}: the gate's, and who hears of the plan. */
export interface PricesRequest extends GateRequest {
  /** Told the plan once the query is compiled (the handler labels its metrics and access log with the query's form). */
  planned?(plan: QueryPlan): void
}

/**
 * Answers `GET /prices` through `gate`: the query is compiled and weighed
 * first (see {@link planRequest}), so a bad one is answered at once without
 * waiting, and only a heavy one (or any query of a store without plans)
 * waits for a slot. Answers like {@link answerPrices}, or with the gate's
 * 503 `HTTP_BUSY` / `HTTP_QUERY_TIMEOUT`. A request with a reader (read
 * keys) is answered within its scope: its fields, its symbols (403 for
 * another), its delay, its cost budget (429). Never rejects, but for parameters
 * that are not a `URLSearchParams` (as an async function would fail).
 */
export function answerThroughGate(
  gate: QueryGate,
  store: PricesQueryable,
  supports: StoreSupports,
  params: URLSearchParams,
  options: AnswerOptions,
  request: PricesRequest,
): Promise<HttpAnswer> {
  let planned: PlannedRequest | HttpAnswer
  const reader = request.reader
  try {
    const asked = readerParams(reader, params)
    if ('status' in asked) return Promise.resolve(asked)
    planned = planRequest(store, asked, options, supports)
  } catch (err) {
    return Promise.reject(err)
  }
  if ('status' in planned) return Promise.resolve(planned)
  if ('plan' in planned) request.planned?.(planned.plan)
  if (reader !== undefined) {
    const refused = 'plan' in planned ? forbiddenSymbol(reader, planned.plan.symbols) : undefined
    if (refused !== undefined) return Promise.resolve(refused)
    const scope = reader.scope()
    if (scope !== undefined) planned = { ...planned, read: { scope } }
  }
  return gate.admit(new PricesJob(store, supports, planned, options), options, request)
}

/** One planned `/prices` query as the gate's job: a class, not a closure per request (each shows in the profile). */
class PricesJob {
  readonly cost: number

  constructor(
    readonly store: PricesQueryable,
    readonly supports: StoreSupports,
    readonly planned: PlannedRequest,
    readonly options: AnswerOptions,
  ) {
    this.cost = planned.cost
  }

  run(): Promise<HttpAnswer> {
    return answerPlanned(this.store, this.planned, this.options, this.supports)
  }
}
