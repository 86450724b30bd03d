import type { AnswerForm, Candle, CountedBucket, EmptyCandle, FilledPoint, PriceAnswer, PriceQuery, SampledRecord } from '../../types.js'
import type { DataCounts } from '../data-counts.js'
import type { DeferredAnswer } from '../deferred-answer.js'
import type { SelectFields } from '../kernels/select-fields.js'
import type { PlanOf, PlannedRead } from '../query-plan.js'
import type { ScanSource } from '../scan-source.js'
import type { QueryOptions } from '../query-options.js'

/**
 * Everything the engine does for one query form, in one object: what it
 * reads, what it costs, how it answers (and streams), how `fields` selects
 * in its answer and how cursors page it. The `FORMS` table
 * (forms/index.ts) holds one per query kind; plan, cost, execute, the
 * answer's name, field selection, cursor paging and the parser's cursor
 * rule dispatch through it, so adding a form adds no `switch`.
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
  /**
   * The whole answer with `select` applied to every record (or record
   * reference) in it, the rest kept (field-selection.ts; a deferred answer
   * is selected item by item there). Absent for a form that takes no
   * `fields` (the parser refuses it): its answer is given unchanged.
   */
  selectFields?(answer: PriceAnswer, query: Q, select: SelectFields): PriceAnswer
  /** How cursors page the form's answers (cursor-page.ts); absent for a form whose answer is never a list. */
  readonly paging?: FormPaging<Q>
  /**
   * Set when `cost` reads no record counts (`counts.symbols` at most), so a
   * store may cost the plan without opening a view; absent, the store gives
   * every count.
   */
  readonly costReadsNoRecords?: true
}

/** How cursors page a form's list answers (docs/semantics.md, "Cursors"). */
export interface FormPaging<Q extends PriceQuery> {
  /**
   * Where a page ends and the next resumes: after a `record` (newest first,
   * by timestamp and id, the records of one millisecond counted) or after a
   * `bucket` of the grid (oldest first).
   */
  readonly resumesAfter: 'record' | 'bucket'
  /** Whether a built query of the form is a list; absent, every one is. */
  lists?(query: Q): boolean
  /**
   * The `GET /prices` parameters that make a query of the form one answer,
   * not a list: the parser refuses a cursor given with any of them (it
   * checks before the query is built, so it reads the parameters, not `lists`).
   */
  readonly notListWith?: readonly string[]
}
