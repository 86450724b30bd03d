import { performance } from 'node:perf_hooks'
import { MAX_TIMER_MS, checkIntegerOption } from '../../../rules/options.js'
import { httpErrorAnswer, reportError, type ErrorReportOptions, type HttpAnswer } from '../core/answer.js'
import type { Reader } from '../access/read-access.js'
import { Deadlines, type Deadline } from './deadlines.js'
import {
  DEFAULT_LIGHT_QUERY_COST, DEFAULT_MAX_ANSWERS_IN_FLIGHT, DEFAULT_MAX_CONCURRENT_QUERIES, DEFAULT_MAX_QUEUED_QUERIES, DEFAULT_QUERY_TIMEOUT_MS,
  limitError, type QueryLimitError, type QueryLimitOptions, type QueryLoad,
} from './query-limits.js'

/** Per-request inputs of {@link QueryGate.admit}. */
export interface GateRequest {
  /** When the request arrived (`performance.now()`); the budget counts from here. Default: now. */
  readonly arrivedAt?: number
  /**
   * Aborted when the client is gone: a query still waiting is then dropped
   * without running. May be a function, called only if the query must wait,
   * so a request that never waits never builds one.
   */
  readonly signal?: AbortSignal | (() => AbortSignal)
  /** Who asks, when the server has read keys: the job's cost is taken from its cost budget first (429 when over). */
  readonly reader?: Reader | undefined
}

/**
 * The work the gate admits: a `/prices` query, a UDF history read, anything
 * weighed in records. The gate knows nothing else of it.
 */
export interface GateJob {
  /** The work it will do, in records read and returned (infinite when unknown): light jobs run at once, heavy ones take a slot. */
  readonly cost: number
  /**
   * Does the work; never rejects. A streamed answer holds its slot until it
   * is sent, and is ended unsent when it comes too late.
   */
  run(): Promise<HttpAnswer>
  /**
   * The answer for a job the gate refuses (`HTTP_BUSY`) or that runs past
   * its budget (`HTTP_QUERY_TIMEOUT`), both 503 with `retry-after: 1`
   * (default: the standard error body).
   */
  refusal?(code: QueryLimitError['code'], message: string): HttpAnswer
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
 * one server (or any host sharing it). Answers with its jobs' answers or its own:
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
   * Admits one job: runs it at once when it is light, else when a slot is
   * free (waiting in line for one, or refused at once when the line is
   * full), within the time budget counted from `request.arrivedAt`. Answers
   * with the job's answer, or 503 `HTTP_BUSY` / `HTTP_QUERY_TIMEOUT`
   * (reported to `onError`), or 429 `HTTP_RATE_LIMITED` for a reader over
   * its cost budget. Never rejects.
   */
  admit(job: GateJob, options: ErrorReportOptions = {}, request: GateRequest = {}): Promise<HttpAnswer> {
    const arrivedAt = request.arrivedAt ?? performance.now()
    const deadline = this.queryTimeoutMs === 0 ? Number.POSITIVE_INFINITY : arrivedAt + this.queryTimeoutMs
    const cost = job.cost
    const overBudget = request.reader?.spend(cost)
    if (overBudget !== undefined) return Promise.resolve(overBudget)
    // Light queries (nearly all) take no await here: each promise layer costs CPU per request.
    if (cost <= this.lightQueryCost) return this.#run(job, options, deadline, undefined)
    return this.#answerHeavy(job, options, deadline, request, arrivedAt + cost / COST_PER_MS)
  }

  /**
   * A heavy job: a free slot, a place in line, or 503 `HTTP_BUSY` at once when the line is full.
   * The line is ordered by `due`: its arrival plus its cost as time, so a cheaper job passes
   * costlier ones that came a little before it, and none waits for ever behind cheaper ones.
   */
  async #answerHeavy(job: GateJob, options: ErrorReportOptions, deadline: number, request: GateRequest, due: number): Promise<HttpAnswer> {
    if (this.#waiting.length === 0 && this.#canAdmit()) {
      this.#running++
    } else if (this.#waiting.length >= this.maxQueuedQueries) {
      return this.#busy(job, options, `the server is busy: ${this.#running} queries are running and ${this.#waiting.length} are waiting; retry later`)
    } else {
      const outcome = await this.#wait(deadline, typeof request.signal === 'function' ? request.signal() : request.signal, due)
      if (outcome === 'gone') return this.#busy(job, options, 'the client went away while its query waited', false)
      if (outcome === 'expired') {
        return this.#busy(job, options, `the server is busy: no query slot came free within ${this.queryTimeoutMs} ms; retry later`)
      }
      // 'admitted': the slot of the query that ended was handed over to this one.
    }
    return this.#run(job, options, deadline, this.#slot)
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

  /** Runs the job, racing its answer against the deadline. */
  #run(job: GateJob, options: ErrorReportOptions, deadline: number, slot: HeavySlot | undefined): Promise<HttpAnswer> {
    if (deadline - performance.now() <= 0) {
      slot?.release()
      return Promise.resolve(this.#busy(job, options, `the server is busy: no query slot came free within ${this.queryTimeoutMs} ms; retry later`))
    }
    // A job never rejects; the slot is held until the store is done,
    // even when the answer comes too late to be sent.
    const work = job.run()
    if (slot !== undefined) void work.then((answer) => holdWhileSent(answer, slot), slot.release)
    if (deadline === Number.POSITIVE_INFINITY) return work
    return new Promise<HttpAnswer>((resolve) => {
      let late = false
      const budget = this.#deadlines.add(deadline, () => {
        late = true
        resolve(this.#overBudget(job, options))
      })
      void work.then((answer) => {
        this.#deadlines.cancel(budget)
        // Too late to be sent: a stream is ended unsent, which gives its slot back.
        if (late) answer.stream?.end()
        else resolve(answer)
      })
    })
  }

  /** Counts, reports and answers a job that ran past its budget. */
  #overBudget(job: GateJob, options: ErrorReportOptions): HttpAnswer {
    this.#timedOut++
    const message = `the query did not finish within ${this.queryTimeoutMs} ms; ask for less (a narrower range, a larger interval, fewer symbols) or retry later`
    reportError(options, limitError('HTTP_QUERY_TIMEOUT', message))
    return limitAnswer(job, 'HTTP_QUERY_TIMEOUT', message)
  }

  #busy(job: GateJob, options: ErrorReportOptions, message: string, count = true): HttpAnswer {
    if (count) {
      this.#refused++
      reportError(options, limitError('HTTP_BUSY', message))
    }
    return limitAnswer(job, 'HTTP_BUSY', message)
  }
}

function limitAnswer(job: GateJob, code: QueryLimitError['code'], message: string): HttpAnswer {
  if (job.refusal !== undefined) return job.refusal(code, message)
  return httpErrorAnswer(503, code, message, { 'retry-after': '1' })
}
