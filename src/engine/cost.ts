import type { DataCounts } from './data-counts.js'
import { formFor } from './forms/index.js'
import type { QueryPlan } from './query-plan.js'

/**
 * The work a plan will do, in records: each record returned counts 1 and
 * each record only read counts `READ_COST`, with the records a range
 * covers estimated from `counts` (each form weighs its own, see forms/).
 * The HTTP gate orders and admits queries by it. A range form sure to be
 * refused by the cap (the buckets `counts` knows hold records already pass
 * it) is refused here, before it waits.
 * @throws PriceStoreError `PRICE_RANGE_TOO_LARGE` for such a range
 */
export function costOf(plan: QueryPlan, counts: DataCounts): number {
  return formFor(plan.query).cost(plan, counts)
}
