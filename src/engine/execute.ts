import { PriceStoreError } from '../errors.js'
import type { Candle, CountedBucket, EmptyCandle, FilledPoint, Limits, PriceAnswer, PriceQuery, SampledRecord } from '../types.js'
import { throwIfAborted } from '../rules/abort.js'
import { abortableSource } from './abortable-source.js'
import { DeferredAnswer } from './deferred-answer.js'
import { selectAnswerFields } from './field-selection.js'
import { formFor } from './forms/index.js'
import { planQuery } from './plan.js'
import type { QueryPlan } from './query-plan.js'
import type { ScanSource } from './scan-source.js'
import type { QueryOptions } from './typed-queries.js'
import { withValidUntil } from './valid-until.js'

/**
 * Answers a validated query from a scan source: the pure core shared by the
 * store's typed methods, `store.query()` and the HTTP adapter.
 * @throws PriceStoreError `PRICE_RANGE_TOO_LARGE` when a bucketed answer exceeds `limits.maxRangePoints`,
 *   `PRICE_ABORTED` when `options.signal` aborts
 */
export function executeQuery(query: PriceQuery, source: ScanSource, limits: Limits, options: QueryOptions = {}): Promise<PriceAnswer> {
  return executePlan(planQuery(query, limits.maxRangePoints), source, options)
}

/**
 * Answers a plan (see `planQuery`) from a scan source. With
 * `options.signal`, an abort stops the reads at their next batch.
 * @throws PriceStoreError `PRICE_RANGE_TOO_LARGE` when a bucketed answer exceeds the plan's `maxRangePoints`,
 *   `PRICE_ABORTED` when `options.signal` aborts
 */
export async function executePlan(plan: QueryPlan, source: ScanSource, options: QueryOptions = {}): Promise<PriceAnswer> {
  const answer = await executePlanDeferred(plan, source, options)
  return answer instanceof DeferredAnswer ? (answer.toArray() as PriceAnswer) : answer
}

/**
 * {@link executePlan}, except that the latest-N and range forms (without
 * gap fill) answer with a {@link DeferredAnswer}: their rows are chosen,
 * counted and checked against the cap, but decoded only as the caller reads
 * them. Errors and their timing are otherwise the same. A query with
 * `fields` has its records selected (field-selection.ts), deferred ones as
 * they are read.
 * @throws PriceStoreError as {@link executePlan}; reading a deferred item may throw `PRICE_CORRUPT_VALUE`
 */
export function executePlanDeferred(plan: QueryPlan, source: ScanSource, options: QueryOptions = {}): Promise<PriceAnswer | DeferredAnswer> {
  const { signal } = options
  const { query } = plan
  const validUntil = 'validUntil' in query && query.validUntil === true
  // The form's run is called directly (no wrapper): latest-1 gains no call, closure or await here.
  if (signal === undefined && query.fields === undefined && !validUntil) return formFor(query).run(plan, source)
  try {
    if (signal !== undefined) throwIfAborted(signal)
  } catch (err) {
    return Promise.reject(err)
  }
  const read = signal === undefined ? source : abortableSource(source, signal)
  const run = formFor(query).run(plan, read)
  // `validUntil` is found from the whole records (their ids and timestamps), then kept by the selection (docs/semantics.md).
  const answer = validUntil ? run.then((whole) => withValidUntil(whole, query, read)) : run
  const selection = query.fields
  return selection === undefined ? answer : answer.then((whole) => selectAnswerFields(whole, query, selection))
}

/**
 * A bucketed form (range, with or without gap fill, or candles) as a
 * stream, without a cap: oldest first. With `options.signal`, an abort
 * stops the reads at their next batch, and no item is yielded after it.
 * @throws PriceStoreError `PRICE_ABORTED` when `options.signal` aborts;
 *   `PRICE_INVALID_QUERY` (on the first pull) for a plan of a form that has no stream
 */
export function streamBuckets(plan: QueryPlan, rawSource: ScanSource, options: QueryOptions = {}): AsyncGenerator<SampledRecord | FilledPoint | Candle | CountedBucket | EmptyCandle> {
  const form = formFor(plan.query)
  if ('validUntil' in plan.query && plan.query.validUntil === true) return noValidityStream()
  return form.stream === undefined ? noStream(plan.query) : form.stream(plan, rawSource, options)
}

/** A stream asked for `validUntil`: refused on the first pull (a stream's records end where the caller stops reading). */
async function* noValidityStream(): AsyncGenerator<never> {
  throw new PriceStoreError('PRICE_INVALID_QUERY', 'validUntil is not given on streams: ask range() or GET /prices for validity windows', { details: { parameter: 'validUntil' } })
}

/** The stream of a form that has none: it refuses on the first pull, as a stream's errors come. */
async function* noStream(query: PriceQuery): AsyncGenerator<never> {
  throw new PriceStoreError('PRICE_INVALID_QUERY', `the ${query.kind} form has no stream: stream a range or candles plan`, { details: { parameter: 'plan' } })
}
