/**
 * How many messages a client may send: a token bucket of `rate` tokens,
 * refilled at `rate` a second, one token per message. A client within the
 * rate is never refused, bursts included; a flood runs the bucket dry.
 */
export class MessageBudget {
  readonly #rate: number
  readonly #now: () => number
  #tokens: number
  #at: number

  /** @param now the clock in ms (`performance.now`, or a test's) */
  constructor(rate: number, now: () => number) {
    this.#rate = rate
    this.#now = now
    this.#tokens = rate
    this.#at = now()
  }

  /** Takes a token for one message; false when none is left (the client sends faster than the rate). */
  take(): boolean {
    const now = this.#now()
    this.#tokens = Math.min(this.#rate, this.#tokens + ((now - this.#at) * this.#rate) / 1_000)
    this.#at = now
    if (this.#tokens < 1) return false
    this.#tokens -= 1
    return true
  }
}
