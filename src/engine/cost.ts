import type { DataCounts } from './data-counts.js'
import { formFor } from './forms/index.js'
import type { QueryPlan } from './query-plan.js'

/**
 * The work a plan will do, in records: each record returned counts 1 and
 * each record only read counts `READ_COST`, with the records a range
 * covers estimated from `counts` (each form weighs its own, see forms/).
 * The HTTP gate orders and admits queries by it. A range form sure to be
 * refused by the cap (the buckets `counts` knows hold records already pass
 * it) is refused here, before it waits. A query asking `validUntil`
 * (docs/semantics.md, "Validity windows") weighs three times as much.
 * @throws PriceStoreError `PRICE_RANGE_TOO_LARGE` for such a range
 */
export function costOf(plan: QueryPlan, counts: DataCounts): number {
  const cost = formFor(plan.query).cost(plan, counts)
  // With `validUntil`, each record returned may take a forward read of up to 16 rows (1/8 each): at most 2 more.
  return 'validUntil' in plan.query && plan.query.validUntil === true ? cost * VALID_UNTIL_COST : cost
}

/** How much more a plan asking `validUntil` costs at most: its own work, and 2 for each record (valid-until.ts). */
const VALID_UNTIL_COST = 3
