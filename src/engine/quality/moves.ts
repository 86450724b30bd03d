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

  /** The move from record `index − 1` to record `index`. */
  add(index: number): void {
    const values = this.#values
    const before = values[index - 1] as number
    const change = Math.abs((values[index] as number) - before)
    if (!(change > 0)) return
    this.#absolute.offer(index, change)
    if (before !== 0) this.#relative.offer(index, change / Math.abs(before))
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
