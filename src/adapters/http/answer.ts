import { answerJsonPieces, answerToJson, sizedAnswerJson } from '../../engine/answer-json.js'
import { DeferredAnswer } from '../../engine/deferred-answer.js'
import { toExactJson } from '../../rules/exact-json.js'
import type { QueryPlan } from '../../engine/plan.js'
import { isPriceStoreError } from '../../errors.js'
import type { PriceAnswer, QueryParams } from '../../types.js'
import { isClientError, statusForError } from './status.js'
import { StreamedBody } from './streamed-body.js'

/**
 * What {@link answerPrices} needs from a store: `PriceStore` fits, and so
 * does a test stub. A store with `plan` and `run` has each request compiled
 * first: a bad request is answered at once, and the gate reads the plan's
 * cost; a store with only `query` has every query treated as heavy.
 */
export interface PricesQueryable {
  query(params: QueryParams): Promise<PriceAnswer>
  /** Compiles the parameters without reading; throws a coded error for bad ones. */
  plan?(params: QueryParams): QueryPlan
  /** Answers a plan made by `plan`. */
  run?(plan: QueryPlan): Promise<PriceAnswer>
  /**
   * The work a plan will do, in records read and returned, from what the
   * store knows of its data (`PriceStore.cost`); may throw the coded error
   * of an answer sure to be over the cap. Without it, a plan's cost is its
   * `records` (infinite for heavy plans).
   */
  cost?(plan: QueryPlan): number
  /** Answers a plan with large forms' records decoded as they are serialised (`PriceStore.runDeferred`); preferred to `run`. */
  runDeferred?(plan: QueryPlan): Promise<PriceAnswer | DeferredAnswer>
}

/**
 * A request ready to run: its plan when the store makes plans, otherwise its
 * parameters; and its cost, the work it will do in records (see
 * `PricesQueryable.cost`), infinite when unknown.
 */
export type PlannedRequest = ({ readonly plan: QueryPlan } | { readonly params: URLSearchParams }) & { readonly cost: number }

/**
 * Compiles a request with the store's `plan`, when it has one, and weighs
 * it with the store's `cost`: the plan and its cost, the parameters for a
 * store without plans (cost unknown: infinite), or the error answer for bad
 * parameters or an answer sure to be over the cap (the store reads nothing).
 */
export function planRequest(store: PricesQueryable, params: URLSearchParams, options: AnswerOptions = {}): PlannedRequest | HttpAnswer {
  if (store.plan === undefined || store.run === undefined) return { params, cost: Number.POSITIVE_INFINITY }
  try {
    const plan = store.plan(params)
    return { plan, cost: store.cost === undefined ? (plan.heavy ? Number.POSITIVE_INFINITY : plan.records) : store.cost(plan) }
  } catch (err) {
    return failedAnswer(options, err)
  }
}

/** A complete HTTP answer, free of sockets: a host framework sends it as it likes. */
export interface HttpAnswer {
  readonly status: number
  /** Lower-case header names; always `content-type`, and `content-length` unless the answer is in `stream`. */
  readonly headers: Readonly<Record<string, string>>
  /** The JSON text of the answer (UTF-8 when sent); empty when the answer is in `stream`. */
  readonly body: string
  /**
   * A large answer to send piece by piece instead of `body` (only when
   * `streamAbove` asked for it): its headers then have no `content-length`.
   */
  readonly stream?: StreamedBody
}

/**
 * Error codes the HTTP adapter adds to the library's `PRICE_*` codes, for
 * failures that only exist in HTTP.
 */
export type HttpErrorCode =
  | 'HTTP_NOT_FOUND'
  | 'HTTP_METHOD_NOT_ALLOWED'
  | 'HTTP_BAD_REQUEST'
  | 'HTTP_HEADERS_TOO_LARGE'
  | 'HTTP_REQUEST_TIMEOUT'
  | 'HTTP_INTERNAL_ERROR'
  /** 503: too many heavy queries running and waiting (see `QueryLimitOptions`); `retry-after` says when to retry. */
  | 'HTTP_BUSY'
  /** 503: the query did not finish within its time budget (`queryTimeoutMs`); `retry-after` says when to retry. */
  | 'HTTP_QUERY_TIMEOUT'
  /** 503: the chart page's script is not built (`npm run build` makes it). */
  | 'HTTP_PAGE_NOT_BUILT'
  /** 401: a write (`POST /prices`) without `Authorization: Bearer <token>` credentials; answered with `www-authenticate: Bearer`. */
  | 'HTTP_UNAUTHORIZED'
  /** 403: a write whose bearer token is not the write token. */
  | 'HTTP_FORBIDDEN'
  /** 413: a write's body is over `maxWriteBytes`. */
  | 'HTTP_PAYLOAD_TOO_LARGE'
  /** 415: a write's body is neither `application/json` nor `application/x-ndjson` in UTF-8, or is compressed. */
  | 'HTTP_UNSUPPORTED_MEDIA_TYPE'
  /** 400: a write's body is not a JSON array or NDJSON, or holds no records. */
  | 'HTTP_INVALID_BODY'

const INTERNAL_MESSAGE = 'internal error while answering the request'
const NOT_OPEN_MESSAGE = 'the price store is not open (starting or shutting down); try again later'
const ABORTED_MESSAGE = 'the query was stopped before it finished; try again later'

/** Options of {@link answerPrices}. */
export interface AnswerOptions {
  /**
   * Called with every error answered with a 5xx status, so the host can log
   * what the client is not shown. Exceptions it throws are ignored.
   */
  readonly onError?: (err: unknown) => void
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
export function answerPlanned(store: PricesQueryable, request: PlannedRequest, options: AnswerOptions = {}): Promise<HttpAnswer> {
  // Plain promise chaining rather than async/await: this runs once per
  // request, and each await layer costs the server measurable CPU.
  let prices: Promise<PriceAnswer | DeferredAnswer>
  try {
    // Promise.resolve: a stub may answer with a plain value or a thenable, as `await` allowed.
    prices = Promise.resolve('plan' in request ? runPlan(store, request.plan) : store.query(request.params))
  } catch (err) {
    return Promise.resolve(failedAnswer(options, err)) // a store (or stub) that throws instead of rejecting
  }
  return prices.then(
    (answer) => pricesAnswer(answer, options),
    (err: unknown) => failedAnswer(options, err),
  )
}

/** Runs a plan with the store's `runDeferred` when it has one, else `run`. */
function runPlan(store: PricesQueryable, plan: QueryPlan): Promise<PriceAnswer | DeferredAnswer> {
  return store.runDeferred === undefined ? (store.run as (plan: QueryPlan) => Promise<PriceAnswer>)(plan) : store.runDeferred(plan)
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

/** The error answer for `err`, reported to `onError` when it is the server's fault. */
export function failedAnswer(options: AnswerOptions, err: unknown): HttpAnswer {
  const answer = errorAnswer(err)
  if (answer.status >= 500) reportError(options, err)
  return answer
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

/** Hands `err` to the host's `onError`, shielding the caller from a throwing logger. */
export function reportError(options: AnswerOptions, err: unknown): void {
  try {
    options.onError?.(err)
  } catch {
    // A broken logger must not turn an answer into a crash.
  }
}

/**
 * The HTTP answer for anything thrown while answering. Client errors keep
 * their message (it names the parameter and value sent); every other error
 * gets a fixed message, so no stack, path or internal detail leaks.
 */
export function errorAnswer(err: unknown): HttpAnswer {
  if (isPriceStoreError(err)) {
    const status = statusForError(err.code)
    if (isClientError(err.code)) return httpErrorAnswer(status, err.code, String(err.message))
    // Every 503 says when to come back: the store may be restarting.
    if (status === 503) {
      return httpErrorAnswer(status, err.code, err.code === 'PRICE_ABORTED' ? ABORTED_MESSAGE : NOT_OPEN_MESSAGE, { 'retry-after': '1' })
    }
    return httpErrorAnswer(status, err.code, INTERNAL_MESSAGE)
  }
  return httpErrorAnswer(500, 'HTTP_INTERNAL_ERROR', INTERNAL_MESSAGE)
}

/** An error answer with the standard body; `extraHeaders` adds e.g. `allow` to a 405. */
export function httpErrorAnswer(
  status: number,
  code: string,
  message: string,
  extraHeaders: Readonly<Record<string, string>> = {},
): HttpAnswer {
  return jsonAnswer(status, { error: { code, message } }, extraHeaders)
}

/** 503 `HTTP_BUSY` with `retry-after: 1`: an endpoint is at its limit (streams or exports open), or the server is shutting down. */
export function busyAnswer(message: string): HttpAnswer {
  return httpErrorAnswer(503, 'HTTP_BUSY', message, { 'retry-after': '1' })
}

/** An answer whose body is `value` as JSON (`toExactJson`); `extraHeaders` adds e.g. `cache-control`. */
export function jsonAnswer(status: number, value: unknown, extraHeaders: Readonly<Record<string, string>> = {}): HttpAnswer {
  const answer = bodyAnswer(status, toExactJson(value))
  return { ...answer, headers: { ...answer.headers, ...extraHeaders } }
}

/** An answer with a JSON body; `bytes` is the body's UTF-8 length when the caller knows it already. */
function bodyAnswer(status: number, body: string, bytes = Buffer.byteLength(body, 'utf8')): HttpAnswer {
  return {
    status,
    headers: {
      'content-type': 'application/json; charset=utf-8',
      'content-length': String(bytes),
    },
    body,
  }
}
