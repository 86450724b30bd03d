/**
 * The `retention` option: when the newest data moves into a new hour, the
 * hours older than the retention period are pruned in the background.
 *
 * The period counts back from the **newest record's hour or the current
 * hour, whichever is earlier**: a historical store opened today keeps its
 * last days of data (the wall clock alone would remove everything), and a
 * record stamped far in the future cannot sweep the store away (the newest
 * timestamp alone would). Only whole hours go, so no chunk is rewritten:
 * the store keeps at least `days` days before the start of that hour.
 */
import { PERIOD_MS, periodOf } from '../../keys/key-layout.js'

const HOURS_PER_DAY = 24

export class Retention {
  readonly #hours: number
  /** The newest hour holding a record seen so far. */
  #newestHour = 0
  /** The `before` of the last prune started; a failed one is retried at the next change. */
  #started = 0

  constructor(days: number) {
    this.#hours = days * HOURS_PER_DAY
  }

  /**
   * Records that the store holds a record in `newestHour`; returns the
   * `before` of the prune now due, or `undefined` when none is.
   */
  due(newestHour: number, now: number = Date.now()): number | undefined {
    if (newestHour > this.#newestHour) this.#newestHour = newestHour
    const first = Math.min(this.#newestHour, periodOf(now)) - this.#hours
    if (first <= 0) return undefined
    const before = first * PERIOD_MS
    if (before <= this.#started) return undefined
    this.#started = before
    return before
  }

  /** A background prune failed: the next change starts it again. */
  failed(): void {
    this.#started = 0
  }
}
