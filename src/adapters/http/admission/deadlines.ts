import { performance } from 'node:perf_hooks'
import { MAX_TIMER_MS } from '../../../rules/options.js'

/** A deadline registered with {@link Deadlines}: `expire` runs once `at` has passed, unless it was cancelled first. */
export interface Deadline {
  readonly at: number
  readonly expire: () => void
}

/**
 * Many deadlines on one timer. The query gate gives every query a time
 * budget, but almost every query ends long before it: a `setTimeout` and
 * `clearTimeout` per query cost more server CPU than a query answered from
 * memory. Here a query only joins a set; the one timer is armed for the
 * earliest deadline and re-armed only when an earlier one comes in (the
 * budget is the same for every query, so that is rare) or when it fires.
 *
 * A deadline never expires before its time (the clock, `performance.now()`
 * by default, is past `at`); it may expire up to about a millisecond late, as with `setTimeout`.
 * The timer keeps the process alive only while some deadline is pending,
 * as one timer per deadline would.
 */
export class Deadlines {
  readonly #pending = new Set<Deadline>()
  #timer: NodeJS.Timeout | undefined
  /** When the timer fires (on the clock's scale), or +Infinity when it is not armed. */
  #armedFor = Number.POSITIVE_INFINITY
  readonly #now: () => number

  /**
   * @param now the clock deadlines are read on, `performance.now()` unless
   *   given (tests drive it with fake timers, so no case depends on how
   *   busy the machine is)
   */
  constructor(now: () => number = () => performance.now()) {
    this.#now = now
  }

  /** Deadlines pending now. */
  get size(): number {
    return this.#pending.size
  }

  /**
   * Runs `expire` once the clock is past `at`, unless {@link cancel} is called first.
   * @throws RangeError when `at` is NaN: such a deadline could neither expire nor be ordered
   */
  add(at: number, expire: () => void): Deadline {
    if (Number.isNaN(at)) throw new RangeError('a deadline must be a time, not NaN')
    const deadline: Deadline = { at, expire }
    this.#pending.add(deadline)
    if (at < this.#armedFor) this.#arm(at)
    else if (this.#pending.size === 1) this.#timer?.ref()
    return deadline
  }

  /** Forgets a deadline (its work ended in time); a no-op once it has expired. */
  cancel(deadline: Deadline): void {
    // The timer stays armed for a deadline that may be gone: cheaper than
    // re-arming per query. It just must not keep an idle process alive.
    if (this.#pending.delete(deadline) && this.#pending.size === 0) this.#timer?.unref()
  }

  #arm(at: number): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer)
    this.#armedFor = at
    // setTimeout counts whole milliseconds from a clock that may lag performance.now(), so it
    // can fire a little early; #fire then re-arms for what is left.
    this.#timer = setTimeout(() => this.#fire(), Math.min(MAX_TIMER_MS, Math.max(1, Math.ceil(at - this.#now()))))
  }

  #fire(): void {
    this.#timer = undefined
    this.#armedFor = Number.POSITIVE_INFINITY
    const now = this.#now()
    let next = Number.POSITIVE_INFINITY
    const due: Deadline[] = []
    for (const deadline of this.#pending) {
      if (deadline.at <= now) due.push(deadline)
      else next = Math.min(next, deadline.at)
    }
    for (const deadline of due) this.#pending.delete(deadline)
    if (next !== Number.POSITIVE_INFINITY) this.#arm(next)
    // Expired last, so a callback that adds or cancels a deadline finds the timer in order.
    for (const deadline of due) deadline.expire()
  }
}
