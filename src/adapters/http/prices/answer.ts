import { answerJsonPieces, answerToJson, sizedAnswerJson } from '../../../engine/answer-json.js'
import { DeferredAnswer } from '../../../engine/deferred-answer.js'
import type { QueryOptions } from '../../../engine/query-options.js'
import type { QueryPlan } from '../../../engine/query-plan.js'
import type { PriceAnswer, QueryParams } from '../../../types.js'
import { supportsOf, type StoreSupports } from '../capabilities.js'
import { bodyAnswer, failedAnswer, type ErrorReportOptions, type HttpAnswer } from '../core/answer.js'
import { StreamedBody } from '../core/streamed-body.js'
import { slashPairOf, withSymbolHint } from './symbol-hint.js'
import { answerPage, planOfRequest, wantsPage, withFirstPage, type PagedQueryable } from './page-answer.js'

/**
 * What {@link answerPrices} needs from a store: `PriceStore` fits, and so
 * does a test stub. A store with `plan` and `run` has each request compiled
 * first: a bad request is answered at once, and the gate reads the plan's
 * cost; a store with only `query` has every query treated as heavy.
 */
export interface PricesQueryable {
  query(params: QueryParams, options?: QueryOptions): Promise<PriceAnswer>
  /** Compiles the parameters without reading; throws a coded error for bad ones. */
  plan?(params: QueryParams): QueryPlan
  /** Answers a plan made by `plan`. */
  run?(plan: QueryPlan, options?: QueryOptions): Promise<PriceAnswer>
  /**
   * The work a plan will do, in records read and returned, from what the
   * store knows of its data (`PriceStore.cost`); may throw the coded error
   * of an answer sure to be over the cap. Without it, a plan's cost is its
   * `records` (infinite for heavy plans).
   */
  cost?(plan: QueryPlan): number
  /** Answers a plan with large forms' records decoded as they are serialised (`PriceStore.runDeferred`); preferred to `run`. */
  runDeferred?(plan: QueryPlan, options?: QueryOptions): Promise<PriceAnswer | DeferredAnswer>
}

/**
 * A request ready to run: its plan when the store makes plans, otherwise its
 * parameters; and its cost, the work it will do in records (see
 * `PricesQueryable.cost`), infinite when unknown.
 */
export type PlannedRequest = ({ readonly plan: QueryPlan } | { readonly params: URLSearchParams }) & {
  readonly cost: number
  /** With `cursor`, to a store that pages: the parameters of the page (page-answer.ts); the plan is the unpaged query's. */
  readonly page?: URLSearchParams
  /** With a single `symbol=Q/B`: the parameters, for the hint an empty answer may get (symbol-hint.ts). */
  readonly hint?: URLSearchParams
  /** What the query may see (a reader's scope, see `QueryOptions.scope`); none: everything. */
  readonly read?: QueryOptions
}

/**
 * Compiles a request with the store's `plan`, when it has one, and weighs
 * it with the store's `cost`: the plan and its cost, the parameters for a
 * store without plans (cost unknown: infinite), or the error answer for bad
 * parameters or an answer sure to be over the cap (the store reads nothing).
 * `supports` is the store's manifest, when the caller has read it already.
 */
export function planRequest(
  store: PricesQueryable, asked: URLSearchParams, options: AnswerOptions = {}, supports: StoreSupports = supportsOf(store),
): PlannedRequest | HttpAnswer {
  let params = asked
  try {
    params = withFirstPage(asked)
  } catch (err) {
    return failedAnswer(options, err)
  }
  if (!supports.plans) return { params, cost: Number.POSITIVE_INFINITY }
  try {
    const plan = planOfRequest(store, (store.plan as (params: QueryParams) => QueryPlan).bind(store), params)
    const cost = weighPlan(store, plan, supports)
    const hint = slashPairOf(params) === undefined ? {} : { hint: params }
    return wantsPage(store, params) ? { plan, cost, page: params, ...hint } : { plan, cost, ...hint }
  } catch (err) {
    return failedAnswer(options, err)
  }
}

/**
 * The cost of a plan made by the store: its `cost` when it has one, else the
 * plan's `records` (infinite for a heavy plan). May throw the store's coded
 * error of an answer sure to be over the cap.
 */
export function weighPlan(store: PricesQueryable, plan: QueryPlan, supports: StoreSupports): number {
  if (!supports.cost) return plan.heavy ? Number.POSITIVE_INFINITY : plan.records
  return (store.cost as (plan: QueryPlan) => number)(plan)
}

/** Options of {@link answerPrices}: `onError`, and when an answer is streamed. */
export interface AnswerOptions extends ErrorReportOptions {
  /**
   * Array answers of more records than this are answered as a
   * {@link HttpAnswer.stream} to send piece by piece, not as one body
   * (default: never). Only a host that sends streams (the handler) sets it.
   */
  readonly streamAbove?: number
}

/**
 * Answers `GET /prices` for a parameter set: 200 with the JSON answer, or the
 * error status with `{"error":{"code","message"}}`. Never rejects.
 *
 * @example
 * const { status, headers, body } = await answerPrices(store, new URLSearchParams('symbol=BTC'))
 */
export function answerPrices(
  store: PricesQueryable,
  params: URLSearchParams,
  options: AnswerOptions = {},
): Promise<HttpAnswer> {
  const request = planRequest(store, params, options)
  return 'status' in request ? Promise.resolve(request) : answerPlanned(store, request, options)
}

/** Answers a request compiled by {@link planRequest}. Never rejects. */
export function answerPlanned(
  store: PricesQueryable, request: PlannedRequest, options: AnswerOptions = {}, supports: StoreSupports = supportsOf(store),
): Promise<HttpAnswer> {
  // Plain promise chaining rather than async/await: this runs once per
  // request, and each await layer costs the server measurable CPU.
  if (request.page !== undefined) return answerPage(store as PricesQueryable & PagedQueryable, request.page, options, pricesAnswer, request.read)
  let prices: Promise<PriceAnswer | DeferredAnswer>
  try {
    // Promise.resolve: a stub may answer with a plain value or a thenable, as `await` allowed.
    prices = Promise.resolve('plan' in request ? runPlan(store, request.plan, supports, request.read) : store.query(request.params, request.read))
  } catch (err) {
    return Promise.resolve(failedAnswer(options, err)) // a store (or stub) that throws instead of rejecting
  }
  const hint = request.hint
  return prices.then(
    (answer) => hint === undefined ? pricesAnswer(answer, options) : Promise.resolve(pricesAnswer(answer, options)).then((sent) => withSymbolHint(sent, answer, hint, store)),
    (err: unknown) => failedAnswer(options, err),
  )
}

/** Runs a plan with the store's `runDeferred` when it has one, else `run`. */
function runPlan(store: PricesQueryable, plan: QueryPlan, supports: StoreSupports, read: QueryOptions | undefined): Promise<PriceAnswer | DeferredAnswer> {
  // A read without options passes none: a stub's run(plan) sees what it always saw.
  if (read === undefined) return !supports.runDeferred ? (store.run as (plan: QueryPlan) => Promise<PriceAnswer>)(plan) : (store.runDeferred as (plan: QueryPlan) => Promise<PriceAnswer | DeferredAnswer>)(plan)
  return !supports.runDeferred ? (store.run as NonNullable<PricesQueryable['run']>)(plan, read) : (store.runDeferred as NonNullable<PricesQueryable['runDeferred']>)(plan, read)
}

/** The 200 answer for the store's answer; a failure to serialise it is answered like a failed query. */
function pricesAnswer(deferred: PriceAnswer | DeferredAnswer, options: AnswerOptions): HttpAnswer | Promise<HttpAnswer> {
  try {
    if ((deferred instanceof DeferredAnswer || Array.isArray(deferred)) && deferred.length > (options.streamAbove ?? Number.POSITIVE_INFINITY)) {
      return streamedAnswer(deferred)
    }
    const answer = deferred instanceof DeferredAnswer ? (deferred.toArray() as PriceAnswer) : deferred
    if (!isSliced(answer)) {
      const { json, bytes } = sizedAnswerJson(answer)
      return bodyAnswer(200, json, bytes)
    }
    return answerToJsonInSlices(answer).then(
      (json) => bodyAnswer(200, json),
      (err: unknown) => failedAnswer(options, err),
    )
  } catch (err) {
    return failedAnswer(options, err)
  }
}

/** A 200 answer whose JSON is built and sent piece by piece. */
function streamedAnswer(answer: readonly object[] | DeferredAnswer): HttpAnswer {
  return {
    status: 200,
    headers: { 'content-type': 'application/json; charset=utf-8' },
    body: '',
    stream: new StreamedBody(answer.length, answerJsonPieces(answer)),
  }
}

/** Records serialised between two turns of the event loop. */
const SLICE_RECORDS = 256

/** Whether {@link answerToJsonInSlices} serialises `answer` in more than one slice. */
function isSliced(answer: PriceAnswer): answer is Extract<PriceAnswer, unknown[]> {
  return Array.isArray(answer) && answer.length > SLICE_RECORDS
}

/**
 * {@link answerToJson}, the same text, but a long array (the range form
 * answers up to `maxRangePoints` records: about 14 MB of JSON and 150 ms of
 * CPU for 10,000 demo records) is serialised in slices with a turn of the
 * event loop between them, so other requests are not held up meanwhile.
 */
export async function answerToJsonInSlices(answer: PriceAnswer): Promise<string> {
  if (!isSliced(answer)) return answerToJson(answer)
  const parts: string[] = []
  for (let start = 0; start < answer.length; start += SLICE_RECORDS) {
    if (start > 0) await new Promise<void>((resolve) => setImmediate(resolve))
    // Each slice is a non-empty array: its JSON is `[` records `]`.
    parts.push(answerToJson(answer.slice(start, start + SLICE_RECORDS) as PriceAnswer).slice(1, -1))
  }
  return `[${parts.join(',')}]`
}

