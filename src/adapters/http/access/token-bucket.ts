/**
 * A token bucket: `capacity` tokens, refilled at `capacity` per `windowMs`.
 * A take of one (a request) needs a whole token; a take of more (a query's
 * cost, known only once it is planned) needs the bucket not to be empty and
 * may leave it in debt (at most a whole budget), so a query dearer than the
 * whole budget still runs once the bucket is full, and the reader then waits
 * for the debt to be paid.
 */
export class TokenBucket {
  readonly #capacity: number
  readonly #perMs: number
  #tokens: number
  #at: number

  constructor(capacity: number, windowMs: number, now: number) {
    this.#capacity = capacity
    this.#perMs = capacity / windowMs
    this.#tokens = capacity
    this.#at = now
  }

  /** Takes `amount` tokens at `now`: 0 when taken, else the ms to wait before trying again (nothing taken). */
  take(amount: number, now: number): number {
    this.#refill(now)
    const needed = amount <= 1 ? amount : Number.MIN_VALUE
    if (this.#tokens >= needed) {
      // The debt is at most one whole budget: however dear a query, its reader waits at most one window for the next.
      this.#tokens = Math.max(this.#tokens - amount, -this.#capacity)
      return 0
    }
    // Less a hair: the refill's floating point must not turn an exact millisecond into the next one.
    return Math.max(1, Math.ceil((needed - this.#tokens) / this.#perMs - 1e-9))
  }

  #refill(now: number): void {
    if (now > this.#at) {
      this.#tokens = Math.min(this.#capacity, this.#tokens + (now - this.#at) * this.#perMs)
      this.#at = now
    }
  }
}
