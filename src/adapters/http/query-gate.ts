import { performance } from 'node:perf_hooks'
import { LIGHT_QUERY_RECORDS, type QueryPlan } from '../../engine/plan.js'
import {
  answerPlanned, httpErrorAnswer, planRequest, reportError, type AnswerOptions, type HttpAnswer, type PlannedRequest, type PricesQueryable,
} from './answer.js'
import { Deadlines, type Deadline } from './deadlines.js'
import { MAX_TIMER_MS, checkIntegerOption } from '../../rules/options.js'

/**
 * Admission control for the store queries behind `GET /prices`, so that one
 * client cannot starve the others (issue 5):
 *
 * - each query is weighed before it runs: its cost is the work it will do,
 *   in records read and returned, estimated by the store from its plan and
 *   what the store knows of its data (`PriceStore.cost`). A query costing
 *   at most `lightQueryCost` is light and runs at once: it never waits
 *   behind heavy ones;
 * - at most `maxConcurrentQueries` heavy queries run against the store at
 *   once (a streamed answer holds its slot until it is sent);
 * - up to `maxQueuedQueries` heavy queries wait for a slot, the line ordered
 *   by arrival plus cost (a cheaper query passes costlier ones that came
 *   shortly before it); past that a query is refused at once with 503 `HTTP_BUSY`;
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
  /**
   * Heavy answers in flight at once: running, or streamed to clients that
   * read slowly (default {@link DEFAULT_MAX_ANSWERS_IN_FLIGHT}). An answer
   * waiting for its client gives its slot to the next query but still holds
   * the records it chose, so this bounds that memory.
   */
  readonly maxAnswersInFlight?: number
  /** The most a query may cost and run at once, without a slot (default {@link DEFAULT_LIGHT_QUERY_COST}). */
  readonly lightQueryCost?: number
}

/**
 * Default cap on heavy queries at once. Decoding and serialising run on the
 * one JavaScript thread, so more heavy queries at once buy no throughput,
 * only latency for everyone: see the cap sweep in docs/reliability.md, where
 * 1 and 2 did best. (An answer waiting for a slow client parks and gives its
 * slot on, so slow clients do not hold the slots.) 2 rather than 1, so that one slow heavy query (a cold
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
/**
 * Default number of heavy answers in flight: each holds at most
 * `maxRangePoints` chosen records' stored bytes (about 6 MB at the default
 * cap) while its client reads, so 16 bound that to about 100 MB.
 */
export const DEFAULT_MAX_ANSWERS_IN_FLIGHT = 16
/**
 * Default cost up to which a query is light: a few hundred records, which
 * take a millisecond or two to answer, so light queries at once never hold
 * the server long (several tokens over 500 symbols, the latest 500 records,
 * a day at ten minutes or coarser).
 */
export const DEFAULT_LIGHT_QUERY_COST = 500
export { LIGHT_QUERY_RECORDS }

/** What a {@link QueryGate} has seen so far, and what it holds now. */
export interface QueryLoad {
  /** Heavy queries running against the store now (timed-out ones included until they end). */
  readonly running: number
  /** Heavy answers being sent to clients that read slowly now (each parked, without a slot). */
  readonly sending: number
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
  /** Told the plan once the query is compiled (the handler labels its metrics and access log with the query's form). */
  planned?(plan: QueryPlan): void
}

type Wake = 'admitted' | 'expired' | 'gone'

/** See `QueryGate.#slot`. */
interface HeavySlot {
  release(): void
  park(): void
  leave(): void
}

/**
 * Holds a heavy query's slot while its answer is sent: a whole answer
 * gives it back at once; a streamed one when sent, or, if its client reads
 * slowly, parks at the first wait and leaves once sent.
 */
function holdWhileSent(answer: HttpAnswer, slot: HeavySlot): void {
  const stream = answer.stream
  if (stream === undefined) return slot.release()
  let parked = false
  stream.onFirstWait(() => {
    parked = true
    slot.park()
  })
  stream.onEnd(() => (parked ? slot.leave() : slot.release()))
}

interface Waiter {
  /** Its place in line: earlier first. */
  readonly due: number
  wake(outcome: Wake): void
}

/**
 * How much of a query's cost counts as one millisecond of waiting when the
 * line is ordered (see {@link QueryGate}): about what one slot answers in a
 * millisecond, so a query waits behind costlier ones only if they came
 * earlier by about the time they take.
 */
const COST_PER_MS = 100

/** The index at which a query due at `due` joins the line: after every query due no later. */
function placeInLine(line: readonly Waiter[], due: number): number {
  let lo = 0
  let hi = line.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if ((line[mid] as Waiter).due <= due) lo = mid + 1
    else hi = mid
  }
  return lo
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
  readonly lightQueryCost: number
  readonly maxAnswersInFlight: number
  #running = 0
  /** Heavy answers still being sent to clients that read slowly, without a slot. */
  #sending = 0
  #refused = 0
  #timedOut = 0
  readonly #waiting: Waiter[] = []
  /** The time budgets of running and waiting queries, on one timer. */
  readonly #deadlines = new Deadlines()

  constructor(options: QueryLimitOptions = {}) {
    this.maxConcurrentQueries = checkIntegerOption('maxConcurrentQueries', options.maxConcurrentQueries, DEFAULT_MAX_CONCURRENT_QUERIES, 1, 1_000_000)
    this.maxQueuedQueries = checkIntegerOption('maxQueuedQueries', options.maxQueuedQueries, DEFAULT_MAX_QUEUED_QUERIES, 0, 1_000_000)
    this.queryTimeoutMs = checkIntegerOption('queryTimeoutMs', options.queryTimeoutMs, DEFAULT_QUERY_TIMEOUT_MS, 0, MAX_TIMER_MS)
    this.maxAnswersInFlight = checkIntegerOption('maxAnswersInFlight', options.maxAnswersInFlight, DEFAULT_MAX_ANSWERS_IN_FLIGHT, 1, 1_000_000)
    this.lightQueryCost = checkIntegerOption('lightQueryCost', options.lightQueryCost, DEFAULT_LIGHT_QUERY_COST, 0, Number.MAX_SAFE_INTEGER)
  }

  /** A snapshot of the gate's load and counters. */
  load(): QueryLoad {
    return { running: this.#running, sending: this.#sending, queued: this.#waiting.length, refused: this.#refused, timedOut: this.#timedOut }
  }

  /**
   * Answers one query through the gate: the store's answer, or 503
   * `HTTP_BUSY` / `HTTP_QUERY_TIMEOUT`. The query is compiled first (see
   * {@link planRequest}): a bad one is answered at once, and only a heavy
   * one (or any query of a store without plans) waits for a slot.
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
    if ('plan' in planned) request.planned?.(planned.plan)
    const cost = planned.cost
    // Light queries (nearly all) take no await here: each promise layer costs CPU per request.
    if (cost <= this.lightQueryCost) return this.#run(store, planned, options, deadline, undefined)
    return this.#answerHeavy(store, planned, options, deadline, request, arrivedAt + cost / COST_PER_MS)
  }

  /**
   * A heavy query: a free slot, a place in line, or 503 `HTTP_BUSY` at once when the line is full.
   * The line is ordered by `due`: its arrival plus its cost as time, so a cheaper query passes
   * costlier ones that came a little before it, and none waits for ever behind cheaper ones.
   */
  async #answerHeavy(
    store: PricesQueryable, planned: PlannedRequest, options: AnswerOptions, deadline: number, request: GateRequest, due: number,
  ): Promise<HttpAnswer> {
    if (this.#waiting.length === 0 && this.#canAdmit()) {
      this.#running++
    } else if (this.#waiting.length >= this.maxQueuedQueries) {
      return this.#busy(options, `the server is busy: ${this.#running} queries are running and ${this.#waiting.length} are waiting; retry later`)
    } else {
      const outcome = await this.#wait(deadline, typeof request.signal === 'function' ? request.signal() : request.signal, due)
      if (outcome === 'gone') return this.#busy(options, 'the client went away while its query waited', false)
      if (outcome === 'expired') {
        return this.#busy(options, `the server is busy: no query slot came free within ${this.queryTimeoutMs} ms; retry later`)
      }
      // 'admitted': the slot of the query that ended was handed over to this one.
    }
    return this.#run(store, planned, options, deadline, this.#slot)
  }

  /** Waits in line for a slot, until admitted, the deadline, or the client leaving. */
  #wait(deadline: number, signal: AbortSignal | undefined, due: number): Promise<Wake> {
    return new Promise<Wake>((resolve) => {
      let budget: Deadline | undefined
      const waiter: Waiter = {
        due,
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
      this.#waiting.splice(placeInLine(this.#waiting, due), 0, waiter)
      signal?.addEventListener('abort', onAbort, { once: true })
      if (deadline !== Number.POSITIVE_INFINITY) budget = this.#deadlines.add(deadline, () => leave('expired'))
    })
  }

  /** Whether a heavy query may start now: a slot is free, and so is room for its answer. */
  #canAdmit(): boolean {
    return this.#running < this.maxConcurrentQueries && this.#running + this.#sending < this.maxAnswersInFlight
  }

  /** Starts the queries first in line while there is room. */
  #admitWaiting(): void {
    while (this.#waiting.length > 0 && this.#canAdmit()) {
      this.#running++
      ;(this.#waiting.shift() as Waiter).wake('admitted')
    }
  }

  /**
   * What a heavy query does with its slot: gives it back when done; or,
   * when its streamed answer first waits for a slow client, parks (the slot
   * goes to the next query while the answer stays counted in flight) and
   * leaves once sent.
   */
  readonly #slot: HeavySlot = {
    release: () => {
      this.#running--
      this.#admitWaiting()
    },
    park: () => {
      this.#running--
      this.#sending++
      this.#admitWaiting()
    },
    leave: () => {
      this.#sending--
      this.#admitWaiting()
    },
  }

  /** Runs the query against the store, racing its answer against the deadline. */
  #run(
    store: PricesQueryable,
    planned: PlannedRequest,
    options: AnswerOptions,
    deadline: number,
    slot: HeavySlot | undefined,
  ): Promise<HttpAnswer> {
    if (deadline - performance.now() <= 0) {
      slot?.release()
      return Promise.resolve(this.#busy(options, `the server is busy: no query slot came free within ${this.queryTimeoutMs} ms; retry later`))
    }
    // answerPrices never rejects; the slot is held until the store is done,
    // even when the answer comes too late to be sent.
    const work = answerPlanned(store, planned, options)
    if (slot !== undefined) void work.then((answer) => holdWhileSent(answer, slot), slot.release)
    if (deadline === Number.POSITIVE_INFINITY) return work
    return new Promise<HttpAnswer>((resolve) => {
      let late = false
      const budget = this.#deadlines.add(deadline, () => {
        late = true
        resolve(this.#overBudget(options))
      })
      void work.then((answer) => {
        this.#deadlines.cancel(budget)
        // Too late to be sent: a stream is ended unsent, which gives its slot back.
        if (late) answer.stream?.end()
        else resolve(answer)
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
