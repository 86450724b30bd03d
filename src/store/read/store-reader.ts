/**
 * The read path's entry: every query, stream and whole-store read of the
 * store goes through here. A query is answered from the hot tails when they
 * hold every row its reads need (missing tails are loaded first), otherwise
 * from a {@link ReadView}; that choice is made here, not by the caller.
 */
import { executePlan, streamBuckets } from '../../engine/execute.js'
import { costOf } from '../../engine/cost.js'
import { formFor } from '../../engine/forms/index.js'
import { checkPlan, planQuery } from '../../engine/plan.js'
import type { QueryPlan } from '../../engine/query-plan.js'
import { scopedSource } from '../../engine/read-scope.js'
import type { ScanSource } from '../../engine/scan-source.js'
import type { QueryOptions } from '../../engine/typed-queries.js'
import { releaseOnAbort, throwIfAborted } from '../../rules/abort.js'
import type { Candle, CountedBucket, EmptyCandle, FilledPoint, Limits, PriceAnswer, PriceQuery, SampledRecord } from '../../types.js'
import { toStorageError } from '../db/storage-errors.js'
import type { ReadState } from './read-state.js'
import type { ReadView } from './read-view.js'
import { loadTails } from './tail-loader.js'

/** How a plan is run against a source (the engine's `executePlan` unless told otherwise). */
export type PlanRunner<T> = (plan: QueryPlan, source: ScanSource, options: QueryOptions) => Promise<T>

/** Reads the store for its façade: answers, streams, and reads with one view. */
export class StoreReader {
  readonly #state: ReadState
  readonly #assertOpen: () => void
  readonly #limits: Limits

  /** `assertOpen` throws `PRICE_NOT_OPEN` unless the store is open; `limits` caps the plans made here. */
  constructor(state: ReadState, assertOpen: () => void, limits: Limits) {
    this.#state = state
    this.#assertOpen = assertOpen
    this.#limits = limits
  }

  /** The plan of a query, under the store's `maxRangePoints`. */
  plan(query: PriceQuery): QueryPlan {
    return planQuery(query, this.#limits.maxRangePoints)
  }

  /** Answers a plan a caller gave, checked first: `PRICE_INVALID_QUERY` for anything but a plan the engine made. */
  async answerGiven<T = PriceAnswer>(plan: QueryPlan, options: QueryOptions, execute: PlanRunner<T> = executePlan as never): Promise<T> {
    checkPlan(plan)
    return this.answer(plan, options, execute)
  }

  /** Plans a query and answers it (see {@link StoreReader.answer}). */
  answerQuery(query: PriceQuery, signal: AbortSignal | undefined): Promise<PriceAnswer> {
    return this.answer(this.plan(query), signal === undefined ? {} : { signal })
  }

  /**
   * Answers a plan from the hot tails when they hold every row its reads
   * need (loading missing tails first), otherwise from a view; within
   * `options.scope` when given (the source is then seen through it).
   */
  async answer<T = PriceAnswer>(plan: QueryPlan, readOptions: QueryOptions, execute: PlanRunner<T> = executePlan as never): Promise<T> {
    this.#assertOpen()
    const { signal, scope } = readOptions
    throwIfAborted(signal)
    const options = signal === undefined ? {} : { signal }
    if (scope !== undefined) {
      const inner = execute
      execute = (made, source, opts) => inner(made, scopedSource(source, scope), opts)
    }
    const state = this.#state
    const tails = state.tails
    if (tails !== undefined) {
      const symbols = plan.symbols === 'all' ? state.symbols : plan.symbols
      let captured = tails.capture(symbols, state)
      if (captured === undefined) {
        await loadTails(tails, symbols, state, (run) => this.read('load the newest records', run), signal)
        captured = tails.capture(symbols, state)
      }
      if (captured?.canAnswer(plan)) return execute(plan, captured, options)
    }
    return this.read('answer the query', (view) => execute(plan, view, options))
  }

  /**
   * A bucketed form as a stream over one view (a snapshot and the open area)
   * for its whole life; the view is taken at the first pull and released
   * when the stream ends, is left, fails or its signal aborts.
   */
  stream(query: PriceQuery, signal: AbortSignal | undefined, action: string): AsyncIterable<SampledRecord | FilledPoint | Candle | CountedBucket | EmptyCandle> {
    const plan = this.plan(query)
    return this.viewStream(action, signal, (view) => streamBuckets(plan, view, signal === undefined ? {} : { signal }))
  }

  /** The items `produce` yields from one view, held for the stream's whole life (see {@link StoreReader.stream}). */
  viewStream<T>(action: string, signal: AbortSignal | undefined, produce: (view: ReadView) => AsyncIterable<T>): AsyncIterable<T> {
    this.#assertOpen()
    const reader = this
    async function* items(): AsyncGenerator<T> {
      const view = reader.view()
      try {
        yield* produce(view)
      } catch (err) {
        throw toStorageError(err, action)
      } finally {
        await view.close()
      }
    }
    return { [Symbol.asyncIterator]: () => (signal === undefined ? items() : releaseOnAbort(items(), signal)) }
  }

  /** Runs a read with one view: a snapshot and the open area, taken together. */
  async read<T>(action: string, run: (view: ReadView) => Promise<T>): Promise<T> {
    const view = this.view()
    try {
      return await run(view)
    } catch (err) {
      throw toStorageError(err, action)
    } finally {
      await view.close()
    }
  }

  /** Every symbol with at least one record, in UTF-8 byte order. */
  symbols(): string[] {
    this.#assertOpen()
    return [...this.#state.symbols]
  }

  /** A view of the store as it is now (rule 2 of read-state.ts). */
  view(): ReadView {
    this.#assertOpen()
    return this.#state.view()
  }

  /**
   * The work a plan will do (see `PriceStore.cost`), with the records a
   * range covers estimated from one view's counts. The plan is checked first, as for {@link StoreReader.answerGiven}.
   */
  cost(plan: QueryPlan): number {
    checkPlan(plan)
    this.#assertOpen()
    const state = this.#state
    if (formFor(plan.query).costReadsNoRecords === true) return costOf(plan, { symbols: state.symbols, records: () => 0 })
    const view = this.view()
    try {
      return costOf(plan, {
        symbols: state.symbols,
        records: (symbol, from, to) => view.estimateRecords(symbol, from, to),
        bucketsSurelyHeld: (symbol, grid) => view.bucketsSurelyHeld(symbol, grid),
        rowsOnGrid: (_symbol, grid) => view.headsRead(grid),
      })
    } finally {
      void view.close().catch(() => {})
    }
  }
}
