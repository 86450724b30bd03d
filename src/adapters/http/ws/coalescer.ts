import { SYSTEM_DELAY_CLOCK } from '../live/delayed-watch.js'
import type { PriceRecord } from '../../../types.js'

/** The time and the timers a {@link Coalescer} runs on: the real ones, or a test's. */
export interface CoalescerClock {
  now(): number
  setTimeout(run: () => void, ms: number): unknown
  clearTimeout(timer: unknown): void
}

/** Node's clock; its timers do not hold the process open. */
export const SYSTEM_CLOCK: CoalescerClock = SYSTEM_DELAY_CLOCK

/** What a {@link Coalescer} hands on: each symbol's newest record since the last flush, and the newest commit taken in. */
export interface CoalescedUpdate {
  /** The newest commit folded in: everything up to it was taken in (older records of a symbol replaced by newer ones). */
  readonly position: number
  readonly commitTag: string | undefined
  /** One record per symbol, the newest, in the order the symbols first changed since the last flush. */
  readonly records: readonly PriceRecord[]
}

/**
 * A `fixed_rate` channel: commits in, at most one update per interval out,
 * carrying each changed symbol's newest record. The first commit after a
 * quiet interval goes out at once; those within an interval of the last
 * update wait for its end and go out together. Memory is one record per
 * symbol, however fast commits come: a fixed-rate subscriber never falls behind.
 */
export class Coalescer {
  readonly #intervalMs: number
  readonly #clock: CoalescerClock
  readonly #flush: (update: CoalescedUpdate) => void
  #pending = new Map<string, PriceRecord>()
  #position = -1
  #commitTag: string | undefined
  #lastFlushAt = Number.NEGATIVE_INFINITY
  #timer: unknown
  #closed = false

  /** @param flush called with each update, synchronously from {@link add} or from the clock's timer */
  constructor(intervalMs: number, clock: CoalescerClock, flush: (update: CoalescedUpdate) => void) {
    this.#intervalMs = intervalMs
    this.#clock = clock
    this.#flush = flush
  }

  /** Whether records wait for the end of the interval. */
  get pending(): boolean {
    return this.#position >= 0
  }

  /** Takes in one commit's records (a commit with none still moves the position on, when something waits). */
  add(position: number, commitTag: string | undefined, records: readonly PriceRecord[]): void {
    if (this.#closed) return
    if (records.length === 0 && !this.pending) return
    for (const record of records) {
      // Delete first: a symbol keeps the place of its newest change, so the order follows the commits.
      this.#pending.delete(record.symbol)
      this.#pending.set(record.symbol, record)
    }
    this.#position = position
    this.#commitTag = commitTag
    if (this.#timer !== undefined) return
    const wait = this.#lastFlushAt + this.#intervalMs - this.#clock.now()
    if (wait <= 0) this.flush()
    else this.#timer = this.#clock.setTimeout(() => this.#onTimer(), wait)
  }

  /** Hands on what waits now, whatever the interval (before a reset, an overflow or the end, which must follow it). */
  flush(): void {
    if (this.#timer !== undefined) this.#clock.clearTimeout(this.#timer)
    this.#timer = undefined
    if (!this.pending || this.#closed) return
    const update = { position: this.#position, commitTag: this.#commitTag, records: [...this.#pending.values()] }
    this.#pending = new Map()
    this.#position = -1
    this.#commitTag = undefined
    this.#lastFlushAt = this.#clock.now()
    this.#flush(update)
  }

  /** Drops what waits and stops the timer. */
  close(): void {
    if (this.#timer !== undefined) this.#clock.clearTimeout(this.#timer)
    this.#timer = undefined
    this.#closed = true
    this.#pending = new Map()
  }

  #onTimer(): void {
    this.#timer = undefined
    this.flush()
  }
}
