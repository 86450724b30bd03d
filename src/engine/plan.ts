import { PriceStoreError } from '../errors.js'
import type { PriceQuery } from '../types.js'
import { formFor } from './forms/index.js'
import { LIGHT_QUERY_RECORDS, type PlannedRead, type QueryPlan } from './query-plan.js'

/** Every plan {@link planQuery} makes, and only those (a brand {@link checkPlan} can trust cheaply). */
class MadePlan implements QueryPlan {
  constructor(
    readonly query: PriceQuery,
    readonly symbols: readonly string[] | 'all',
    readonly reads: readonly PlannedRead[],
    readonly records: number,
    readonly heavy: boolean,
    readonly maxRangePoints: number,
  ) {
    Object.freeze(this)
  }
}

/**
 * Compiles a validated query (from `parseQuery` or the typed methods) into
 * its plan: its form (forms/) says which symbols and reads.
 * @example
 * planQuery(parseQuery(params, config), config.limits.maxRangePoints).heavy
 */
export function planQuery(query: PriceQuery, maxRangePoints: number): QueryPlan {
  const form = formFor(query)
  const symbols = form.symbols(query)
  const reads = form.reads(query)
  let perSymbol = 0
  for (const read of reads) perSymbol += read.limit ?? Number.POSITIVE_INFINITY
  const records = symbols === 'all' ? Number.POSITIVE_INFINITY : perSymbol * symbols.length
  return new MadePlan(query, symbols, reads, records, records > LIGHT_QUERY_RECORDS, maxRangePoints)
}

/**
 * Checks that `plan` was made by {@link planQuery} (a plan is trusted: its
 * query is not validated again).
 * @throws PriceStoreError `PRICE_INVALID_QUERY` for anything else
 */
export function checkPlan(plan: unknown): asserts plan is QueryPlan {
  // A copy ({ ...plan }) or a look-alike is not a plan; its query was never validated.
  if (!(plan instanceof MadePlan)) {
    throw new PriceStoreError('PRICE_INVALID_QUERY', 'not a query plan: make one with store.plan(params)', { details: { parameter: 'plan' } })
  }
}
