/**
 * Cross rates: the price of one `quote` in `base`, derived from two records
 * priced in the same unit (USD for RedStone). Every point names both records
 * it came from, so a client can fetch them and check their signatures.
 *
 * Arithmetic: `value = quote.value / base.value`, one IEEE-754 float64
 * division, nothing rounded after it. A base of 0 (or -0), or a quotient
 * that is not finite, refuses the point with a reason instead of answering
 * ±Infinity or NaN; so does `maxAge` when the legs are too far apart.
 */
import type { CrossOutcome, RecordRef } from '../../types.js'

/** The rate of two legs (each the record in force, or `undefined` for none), or why it is refused. */
export function crossOutcome(quote: RecordRef | undefined, base: RecordRef | undefined, maxAge: number | undefined): CrossOutcome {
  if (quote === undefined) return { refused: 'no-quote', legs: base === undefined ? {} : { base } }
  if (base === undefined) return { refused: 'no-base', legs: { quote } }
  const legs = { quote, base }
  const newer = Math.max(quote.timestamp, base.timestamp)
  const age = newer - Math.min(quote.timestamp, base.timestamp)
  if (maxAge !== undefined && age > maxAge) return { refused: 'legs-too-far-apart', legs }
  if (base.value === 0) return { refused: 'base-zero', legs }
  const value = quote.value / base.value
  if (!Number.isFinite(value)) return { refused: 'not-finite', legs }
  return { point: { value, timestamp: newer, age, legs } }
}

/**
 * One leg's records in ascending (timestamp, id) order, walked forward for
 * times that never decrease: the record in force at `t` is the last with
 * `timestamp <= t`, so among records of one millisecond the greatest id (as
 * the as-of form answers). Each record is passed once over a whole series.
 */
export class LegWalk {
  readonly #refs: readonly RecordRef[]
  #next = 0
  #held: RecordRef | undefined

  constructor(refs: readonly RecordRef[]) {
    this.#refs = refs
  }

  /** The record in force at `t` (not before the last `t` asked). */
  at(t: number): RecordRef | undefined {
    const refs = this.#refs
    while (this.#next < refs.length && (refs[this.#next] as RecordRef).timestamp <= t) this.#held = refs[this.#next++]
    return this.#held
  }

  /** When the record in force next changes after the last `at`: the next record's timestamp, or infinity. */
  nextChange(): number {
    return this.#next < this.#refs.length ? (this.#refs[this.#next] as RecordRef).timestamp : Number.POSITIVE_INFINITY
  }
}

/** Two legs walked together: the rate in force at ascending times, and when it next may change. */
export class CrossWalk {
  readonly #quote: LegWalk
  readonly #base: LegWalk
  readonly #maxAge: number | undefined

  constructor(quote: readonly RecordRef[], base: readonly RecordRef[], maxAge: number | undefined) {
    this.#quote = new LegWalk(quote)
    this.#base = new LegWalk(base)
    this.#maxAge = maxAge
  }

  /** The rate in force at `t` (times asked never decrease). */
  at(t: number): CrossOutcome {
    return crossOutcome(this.#quote.at(t), this.#base.at(t), this.#maxAge)
  }

  /** The next time after the last `at` when a record of either leg comes into force, or infinity. */
  nextChange(): number {
    return Math.min(this.#quote.nextChange(), this.#base.nextChange())
  }
}

/** A rate of the derived series and when it came into force (for a window, `from` for the first). */
export interface TimedOutcome {
  readonly at: number
  readonly outcome: CrossOutcome
}

/**
 * The derived series over `start..end` (a walk not yet past `start`): the
 * rate in force at `start`, then the rate at each later millisecond of
 * `start..end` where a record of either leg lies (all records of that
 * millisecond applied), in time order. Pure merge: no lookup per point.
 */
export function* derivedSeries(walk: CrossWalk, start: number, end: number): Generator<TimedOutcome> {
  yield { at: start, outcome: walk.at(start) }
  for (let t = walk.nextChange(); t <= end; t = walk.nextChange()) yield { at: t, outcome: walk.at(t) }
}
