/**
 * The largest moves between consecutive records of a series: kept as a
 * few indexes while the series is walked, and only those turned into
 * records (their ids read) at the end.
 */
import type { QualitySeries } from './series.js'
import { MOVES_LISTED, type MoveSummary, type QualityMove } from './quality-types.js'

/** The `k` entries with the largest keys seen, largest first; a tie keeps the one added first. */
export class TopIndexes {
  readonly #k: number
  readonly #indexes: number[] = []
  readonly #keys: number[] = []

  constructor(k: number) {
    this.#k = k
  }

  /** Offers `index` with its `key` (indexes are offered in ascending order). */
  offer(index: number, key: number): void {
    const keys = this.#keys
    if (keys.length === this.#k && !(key > (keys[keys.length - 1] as number))) return
    // After every key at least as large: an earlier entry wins a tie.
    let at = keys.length
    while (at > 0 && (keys[at - 1] as number) < key) at--
    keys.splice(at, 0, key)
    this.#indexes.splice(at, 0, index)
    if (keys.length > this.#k) {
      keys.pop()
      this.#indexes.pop()
    }
  }

  /** A key at or below this is not taken by {@link TopIndexes.offer} (-Infinity until `k` entries are held). */
  get floor(): number {
    return this.#keys.length === this.#k ? (this.#keys[this.#k - 1] as number) : Number.NEGATIVE_INFINITY
  }

  get indexes(): readonly number[] {
    return this.#indexes
  }
}

/** Collects the largest moves by `|change|` and by `|relative|`, each move named by the index of its later record. */
export class MovesBuilder {
  readonly #series: QualitySeries
  readonly #values: ArrayLike<number>
  readonly #absolute = new TopIndexes(MOVES_LISTED)
  readonly #relative = new TopIndexes(MOVES_LISTED)

  constructor(series: QualitySeries, values: ArrayLike<number>) {
    this.#series = series
    this.#values = values
  }

  /**
   * Offers each move to records `1..length-1`, in order (a move of no
   * change is none; a move from 0 has no relative size): one tight loop
   * over the values, a key no list takes skipped without a call.
   */
  addAll(length: number): void {
    const values = this.#values
    const absolute = this.#absolute
    const relative = this.#relative
    let absoluteFloor = absolute.floor
    let relativeFloor = relative.floor
    for (let index = 1; index < length; index++) {
      const before = values[index - 1] as number
      const change = Math.abs((values[index] as number) - before)
      if (!(change > 0)) continue
      // `offer` itself refuses a key not above its floor once full (and a NaN): skipping those here changes nothing.
      if (!(change <= absoluteFloor)) {
        absolute.offer(index, change)
        absoluteFloor = absolute.floor
      }
      if (before === 0) continue
      const ratio = change / Math.abs(before)
      if (!(ratio <= relativeFloor)) {
        relative.offer(index, ratio)
        relativeFloor = relative.floor
      }
    }
  }

  summary(): MoveSummary {
    return {
      largest: this.#absolute.indexes.map((index) => moveAt(this.#series, this.#values, index)),
      largestRelative: this.#relative.indexes.map((index) => moveAt(this.#series, this.#values, index)),
    }
  }
}

/** The move from record `index − 1` to record `index`. */
export function moveAt(series: QualitySeries, values: ArrayLike<number>, index: number): QualityMove {
  const { timestamps } = series
  const before = values[index - 1] as number
  const after = values[index] as number
  const change = after - before
  return {
    from: { id: series.idAt(index - 1), timestamp: timestamps[index - 1] as number, value: before },
    to: { id: series.idAt(index), timestamp: timestamps[index] as number, value: after },
    change,
    relative: before === 0 ? null : change / Math.abs(before),
  }
}
