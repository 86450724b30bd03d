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

/**
 * The time before which a retention of `days` days removes records, for a
 * store whose newest record is in hour `newestHour` (see the rule above), or
 * `undefined` when it removes nothing. Pure: a caller can tell what
 * retention will remove before the store removes it.
 */
export function retentionCutoff(days: number, newestHour: number, now: number = Date.now()): number | undefined {
  const first = Math.min(newestHour, periodOf(now)) - days * HOURS_PER_DAY
  return first <= 0 ? undefined : first * PERIOD_MS
}

/** The `retention` option of one open store: which prune is due as its newest hour moves. */
export class Retention {
  readonly #days: number
  /** The newest hour holding a record seen so far. */
  #newestHour = 0
  /** The `before` of the last prune started; a failed one is retried at the next change. */
  #started = 0

  constructor(days: number) {
    this.#days = days
  }

  /**
   * Records that the store holds a record in `newestHour`; returns the
   * `before` of the prune now due, or `undefined` when none is.
   */
  due(newestHour: number, now: number = Date.now()): number | undefined {
    if (newestHour > this.#newestHour) this.#newestHour = newestHour
    const before = retentionCutoff(this.#days, this.#newestHour, now)
    if (before === undefined || before <= this.#started) return undefined
    this.#started = before
    return before
  }

  /** A background prune failed: the next change starts it again. */
  failed(): void {
    this.#started = 0
  }
}
