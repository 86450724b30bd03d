import type { RecordRef, Twap } from '../../types.js'
import type { ScanRow } from '../scan-source.js'
import { refOf } from './rows.js'

/** Values this large or larger (in magnitude) make the sum be kept halved: no sum of shares of them can then overflow. */
const HALVE_AT = 2 ** 1023

/**
 * The time-weighted average of one symbol over `from..to`, built from
 * rows pushed in ascending (timestamp, id) order: first the record in force
 * at `from` (the latest at or before it), if any, then every row after
 * `from` up to `to`.
 *
 * Each record's value weighs the time it is in force: from its timestamp
 * (or `from`, for the record carried in) to the next record's timestamp,
 * and the last record's to `to`. A record followed by another at the same
 * millisecond weighs nothing. Each weight is taken as a share of the span
 * (so no term can overflow), summed with Neumaier's compensation, so many
 * small weights do not lose precision. The shares may add up to a hair
 * over 1, so a sum of values near the largest double could still round
 * past it: once a value's magnitude reaches {@link HALVE_AT}, the sum is
 * kept halved (exactly, by a power of two) and doubled at the end, and the
 * average is held within the smallest and largest value weighed, where an
 * average must lie.
 */
export class TwapBuilder {
  readonly #from: number
  readonly #to: number
  #first: RecordRef | undefined
  #held: RecordRef | undefined
  #start = 0
  #sum = 0
  #compensation = 0
  #count = 0
  /** 2 once the sum is kept halved (see {@link HALVE_AT}), else 1. */
  #scale = 1
  #min = Infinity
  #max = -Infinity

  constructor(from: number, to: number) {
    this.#from = from
    this.#to = to
  }

  push(row: ScanRow): void {
    const ref = refOf(row)
    if (this.#held === undefined) {
      this.#first = ref
      this.#start = Math.max(ref.timestamp, this.#from)
    } else {
      this.#weigh(this.#held, ref.timestamp)
      // A later record of the same millisecond replaces the first one before it has any weight.
      if (ref.timestamp === this.#first?.timestamp) this.#first = ref
    }
    this.#held = ref
  }

  /** The average, or `undefined` when no record is in force anywhere in the window. */
  finish(): Twap | undefined {
    const held = this.#held
    const first = this.#first
    if (held === undefined || first === undefined) return undefined
    this.#weigh(held, this.#to)
    const span = this.#to - this.#start
    const [twap, count] = span === 0 ? [held.value, 1] : [this.#average(), this.#count]
    return { twap, from: this.#from, to: this.#to, start: this.#start, count, first, last: held }
  }

  /** The compensated sum, at full scale, within the values weighed. */
  #average(): number {
    const average = (this.#sum + this.#compensation) * this.#scale
    return Math.min(this.#max, Math.max(this.#min, average))
  }

  /** Adds `record`'s value weighted by the time from its start to `until`. */
  #weigh(record: RecordRef, until: number): void {
    const weight = until - Math.max(record.timestamp, this.#from)
    if (weight <= 0) return
    this.#count++
    const { value } = record
    if (value < this.#min) this.#min = value
    if (value > this.#max) this.#max = value
    if (this.#scale === 1 && Math.abs(value) >= HALVE_AT) {
      this.#scale = 2
      this.#sum /= 2
      this.#compensation /= 2
    }
    // Each value weighs its share of the whole span, so no term can overflow.
    const term = (value / this.#scale) * (weight / (this.#to - this.#start))
    const sum = this.#sum + term
    // Neumaier: keep the low-order bits lost by whichever addend is smaller.
    this.#compensation += Math.abs(this.#sum) >= Math.abs(term) ? this.#sum - sum + term : term - sum + this.#sum
    this.#sum = sum
  }
}
