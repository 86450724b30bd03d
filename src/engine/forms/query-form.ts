import type { AnswerForm, Candle, CountedBucket, EmptyCandle, FilledPoint, PriceAnswer, PriceQuery, SampledRecord } from '../../types.js'
import type { DataCounts } from '../data-counts.js'
import type { DeferredAnswer } from '../deferred-answer.js'
import type { PlanOf, PlannedRead } from '../query-plan.js'
import type { ScanSource } from '../scan-source.js'
import type { QueryOptions } from '../typed-queries.js'

/**
 * Everything the engine does for one query form, in one object: what it
 * reads, what it costs, how it answers (and streams). The `FORMS` table
 * (forms/index.ts) holds one per query kind; plan, cost, execute and the
 * answer's name dispatch through it, so adding a form adds no `switch`.
 */
export interface QueryForm<Q extends PriceQuery> {
  /** The name of the answer the query gets (`TypedAnswer['form']`). */
  answerForm(query: Q): AnswerForm
  /** The symbols read: a list, or `'all'` for every symbol in the store. */
  symbols(query: Q): readonly string[] | 'all'
  /** The reads made of each symbol, in order, frozen (see `frozenReads`). */
  reads(query: Q): readonly PlannedRead[]
  /**
   * The work of a plan in records (see `costOf`).
   * @throws PriceStoreError `PRICE_RANGE_TOO_LARGE` for a query sure to be refused by the cap
   */
  cost(plan: PlanOf<Q>, counts: DataCounts): number
  /**
   * Answers a plan from a source (already checked against the caller's
   * signal); a `DeferredAnswer` when its rows are chosen but decoded only as
   * they are read.
   */
  run(plan: PlanOf<Q>, source: ScanSource): Promise<PriceAnswer | DeferredAnswer>
  /** The answer as a stream without a cap, oldest first: the bucketed forms only. */
  stream?(plan: PlanOf<Q>, source: ScanSource, options: QueryOptions): AsyncGenerator<SampledRecord | FilledPoint | Candle | CountedBucket | EmptyCandle>
}
