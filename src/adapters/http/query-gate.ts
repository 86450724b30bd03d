import { performance } from 'node:perf_hooks'
import { PriceStoreError } from '../../errors.js'
import { LIGHT_QUERY_RECORDS } from '../../engine/plan.js'
import {
  answerPlanned, httpErrorAnswer, planRequest, reportError, type AnswerOptions, type HttpAnswer, type PlannedRequest, type PricesQueryable,
} from './answer.js'
import { Deadlines, MAX_TIMER_MS, type Deadline } from './deadlines.js'

export { MAX_TIMER_MS }

/**
 * Admission control for the store queries behind `GET /prices`, so that one
 * client cannot starve the others (issue 5):
 *
 * - at most `maxConcurrentQueries` heavy queries (a plan's `heavy`: more
 *   than {@link LIGHT_QUERY_RECORDS} records may be read) run against the
 *   store at once; light lookups never wait behind them;
 * - up to `maxQueuedQueries` heavy queries wait for a slot, first come first
 *   served; past that a query is refused at once with 503 `HTTP_BUSY`;
 * - every query has a time budget of `queryTimeoutMs`, counted from the
 *   request's arrival (time spent waiting included). A query still waiting
 *   when its budget runs out is dropped from the line and answered 503
 *   `HTTP_BUSY`; a query still running is answered 503 `HTTP_QUERY_TIMEOUT`.
 *   A LevelDB read cannot be cancelled, so a timed-out query runs to its end
 *   and its answer is thrown away; it keeps its slot until then, so the cap
 *   always counts the work the store is really doing.
 *
 * Both 503 answers carry `retry-after: 1`.
 */
export interface QueryLimitOptions {
  /** Heavy queries running at once (default {@link DEFAULT_MAX_CONCURRENT_QUERIES}); at least 1. */
  readonly maxConcurrentQueries?: number
  /** Heavy queries waiting for a slot (default {@link DEFAULT_MAX_QUEUED_QUERIES}); 0 refuses at once when all slots are taken. */
  readonly maxQueuedQueries?: number
  /** Time budget of one query in ms, from arrival to answer (default {@link DEFAULT_QUERY_TIMEOUT_MS}); 0 means none. */
  readonly queryTimeoutMs?: number
}

/**
 * Default cap on heavy queries at once. Decoding and serialising run on the
 * one JavaScript thread, so more heavy queries at once buy no throughput,
 * only memory (a 10,000-record range answer is about 14 MB of JSON) and
 * latency for everyone: see the cap sweep in docs/reliability.md, where 1
 * and 2 did best. 2 rather than 1, so that one slow heavy query (a cold
 * disk) does not hold up every other.
 */
export const DEFAULT_MAX_CONCURRENT_QUERIES = 2
/**
 * Default number of heavy queries waiting for a slot: about as many as get
 * through within the default 10 s budget when the store is busy (a query
 * that cannot is better refused at once than after 10 s of waiting).
 */
export const DEFAULT_MAX_QUEUED_QUERIES = 64
/** Default time budget of one query (ms). */
export const DEFAULT_QUERY_TIMEOUT_MS = 10_000
export { LIGHT_QUERY_RECORDS }

/** What a {@link QueryGate} has seen so far, and what it holds now. */
export interface QueryLoad {
  /** Heavy queries running against the store now (timed-out ones included until they end). */
  readonly running: number
  /** Heavy queries waiting for a slot now. */
  readonly queued: number
  /** Queries refused with `HTTP_BUSY` so far (line full, or budget spent waiting). */
  readonly refused: number
  /** Queries answered `HTTP_QUERY_TIMEOUT` so far. */
  readonly timedOut: number
}

/** Per-request inputs of {@link QueryGate.answer}. */
export interface GateRequest {
  /** When the request arrived (`performance.now()`); the budget counts from here. Default: now. */
  readonly arrivedAt?: number
  /**
   * Aborted when the client is gone: a query still waiting is then dropped
   * without running. May be a function, called only if the query must wait,
   * so a request that never waits never builds one.
   */
  readonly signal?: AbortSignal | (() => AbortSignal)
}

type Wake = 'admitted' | 'expired' | 'gone'

interface Waiter {
  wake(outcome: Wake): void
}

/**
 * The cap, line and time budget described in {@link QueryLimitOptions}, for
 * one server (or any host sharing it). Answers like {@link answerPrices}:
 * never rejects.
 */
export class QueryGate {
  readonly maxConcurrentQueries: number
  readonly maxQueuedQueries: number
  readonly queryTimeoutMs: number
  #running = 0
  #refused = 0
  #timedOut = 0
  readonly #waiting: Waiter[] = []
  /** The time budgets of running and waiting queries, on one timer. */
  readonly #deadlines = new Deadlines()

  constructor(options: QueryLimitOptions = {}) {
    this.maxConcurrentQueries = checkIntegerOption('maxConcurrentQueries', options.maxConcurrentQueries, DEFAULT_MAX_CONCURRENT_QUERIES, 1, 1_000_000)
    this.maxQueuedQueries = checkIntegerOption('maxQueuedQueries', options.maxQueuedQueries, DEFAULT_MAX_QUEUED_QUERIES, 0, 1_000_000)
    this.queryTimeoutMs = checkIntegerOption('queryTimeoutMs', options.queryTimeoutMs, DEFAULT_QUERY_TIMEOUT_MS, 0, MAX_TIMER_MS)
  }

  /** A snapshot of the gate's load and counters. */
  load(): QueryLoad {
    return { running: this.#running, queued: this.#waiting.length, refused: this.#refused, timedOut: this.#timedOut }
  }

  /**
   * Answers one query through the gate: the store's answer, or 503
   * `HTTP_BUSY` / `HTTP_QUERY_TIMEOUT`. The query is compiled first (see
   * {@link planRequest}): a bad one is answered at once, and only a heavy
   * plan (or any query of a store without plans) waits for a slot.
   */
  answer(store: PricesQueryable, params: URLSearchParams, options: AnswerOptions = {}, request: GateRequest = {}): Promise<HttpAnswer> {
    const arrivedAt = request.arrivedAt ?? performance.now()
    const deadline = this.queryTimeoutMs === 0 ? Number.POSITIVE_INFINITY : arrivedAt + this.queryTimeoutMs
    let planned: PlannedRequest | HttpAnswer
    try {
      planned = planRequest(store, params, options)
    } catch (err) {
      return Promise.reject(err) // e.g. params not a URLSearchParams: fail as an async function would
    }
    if ('status' in planned) return Promise.resolve(planned)
    // Light queries (nearly all) take no await here: each promise layer costs CPU per request.
    if ('plan' in planned && !planned.plan.heavy) return this.#run(store, planned, options, deadline, undefined)
    return this.#answerHeavy(store, planned, options, deadline, request)
  }

  /** A heavy query: a free slot, a place in line, or 503 `HTTP_BUSY` at once when the line is full. */
  async #answerHeavy(store: PricesQueryable, planned: PlannedRequest, options: AnswerOptions, deadline: number, request: GateRequest): Promise<HttpAnswer> {
    if (this.#running < this.maxConcurrentQueries) {
      this.#running++
    } else if (this.#waiting.length >= this.maxQueuedQueries) {
      return this.#busy(options, `the server is busy: ${this.#running} queries are running and ${this.#waiting.length} are waiting; retry later`)
    } else {
      const outcome = await this.#wait(deadline, typeof request.signal === 'function' ? request.signal() : request.signal)
      if (outcome === 'gone') return this.#busy(options, 'the client went away while its query waited', false)
      if (outcome === 'expired') {
        return this.#busy(options, `the server is busy: no query slot came free within ${this.queryTimeoutMs} ms; retry later`)
      }
      // 'admitted': the slot of the query that ended was handed over to this one.
    }
    return this.#run(store, planned, options, deadline, () => this.#release())
  }

  /** Waits in line for a slot, until admitted, the deadline, or the client leaving. */
  #wait(deadline: number, signal: AbortSignal | undefined): Promise<Wake> {
    return new Promise<Wake>((resolve) => {
      let budget: Deadline | undefined
      const waiter: Waiter = {
        wake: (outcome) => {
          if (budget !== undefined) this.#deadlines.cancel(budget)
          signal?.removeEventListener('abort', onAbort)
          resolve(outcome)
        },
      }
      const leave = (outcome: Wake): void => {
        const index = this.#waiting.indexOf(waiter)
        if (index < 0) return // already admitted
        this.#waiting.splice(index, 1)
        waiter.wake(outcome)
      }
      const onAbort = (): void => leave('gone')
      if (signal?.aborted === true) {
        resolve('gone')
        return
      }
      this.#waiting.push(waiter)
      signal?.addEventListener('abort', onAbort, { once: true })
      if (deadline !== Number.POSITIVE_INFINITY) budget = this.#deadlines.add(deadline, () => leave('expired'))
    })
  }

  /** A slot came free: hand it to the longest-waiting query, or give it back. */
  #release(): void {
    const next = this.#waiting.shift()
    if (next === undefined) this.#running--
    else next.wake('admitted')
  }

  /** Runs the query against the store, racing its answer against the deadline. */
  #run(
    store: PricesQueryable,
    planned: PlannedRequest,
    options: AnswerOptions,
    deadline: number,
    release: (() => void) | undefined,
  ): Promise<HttpAnswer> {
    if (deadline - performance.now() <= 0) {
      release?.()
      return Promise.resolve(this.#busy(options, `the server is busy: no query slot came free within ${this.queryTimeoutMs} ms; retry later`))
    }
    // answerPrices never rejects; the slot is held until the store is done,
    // even when the answer comes too late to be sent.
    const work = answerPlanned(store, planned, options)
    if (release !== undefined) void work.then(release, release)
    if (deadline === Number.POSITIVE_INFINITY) return work
    return new Promise<HttpAnswer>((resolve) => {
      // Whichever comes first answers; resolving a settled promise again does nothing.
      const budget = this.#deadlines.add(deadline, () => resolve(this.#overBudget(options)))
      void work.then((answer) => {
        this.#deadlines.cancel(budget)
        resolve(answer)
      })
    })
  }

  /** Counts, reports and answers a query that ran past its budget. */
  #overBudget(options: AnswerOptions): HttpAnswer {
    this.#timedOut++
    const message = `the query did not finish within ${this.queryTimeoutMs} ms; ask for less (a narrower range, a larger interval, fewer symbols) or retry later`
    reportError(options, limitError('HTTP_QUERY_TIMEOUT', message))
    return limitAnswer('HTTP_QUERY_TIMEOUT', message)
  }

  #busy(options: AnswerOptions, message: string, count = true): HttpAnswer {
    if (count) {
      this.#refused++
      reportError(options, limitError('HTTP_BUSY', message))
    }
    return limitAnswer('HTTP_BUSY', message)
  }
}

/** The error handed to `onError` for a refused or timed-out query: `code` is `HTTP_BUSY` or `HTTP_QUERY_TIMEOUT`. */
export interface QueryLimitError extends Error {
  readonly code: 'HTTP_BUSY' | 'HTTP_QUERY_TIMEOUT'
}

/** Whether `err` is the error {@link QueryGate} reports for a refused or timed-out query. */
export function isQueryLimitError(err: unknown): err is QueryLimitError {
  return err instanceof Error && err.name === 'QueryLimitError'
}

function limitError(code: QueryLimitError['code'], message: string): QueryLimitError {
  const err = new Error(message) as Error & { code: QueryLimitError['code'] }
  err.name = 'QueryLimitError'
  err.code = code
  return err
}

function limitAnswer(code: QueryLimitError['code'], message: string): HttpAnswer {
  return httpErrorAnswer(503, code, message, { 'retry-after': '1' })
}

/** Checks a whole-number option within [min, max]; `undefined` gives `fallback`. Throws `PRICE_INVALID_OPTIONS`. */
export function checkIntegerOption(name: string, value: number | undefined, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw new PriceStoreError('PRICE_INVALID_OPTIONS', `${name} must be a whole number from ${min} to ${max} (got ${String(value)})`)
  }
  return value
}
