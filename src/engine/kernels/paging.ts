import { PriceStoreError } from '../../errors.js'

/** The paging options of the bucketed forms: buckets skipped, then the most kept. */
export interface Paging {
  readonly offset: number
  readonly limit?: number
}

/** How many of `total` buckets an answer holds after `offset` and `limit`. */
export function pageOf(total: number, paging: Paging): number {
  return Math.max(0, Math.min(total - paging.offset, paging.limit ?? Number.POSITIVE_INFINITY))
}

/**
 * The refusal of a bucketed answer over the cap (`maxRangePoints`), with
 * the size it would have had; `atLeast` when the size is a lower bound
 * (the cost estimate refuses before reading).
 */
export function rangeTooLarge(count: number, cap: number, atLeast: boolean): PriceStoreError {
  return new PriceStoreError(
    'PRICE_RANGE_TOO_LARGE',
    `the answer would hold ${atLeast ? 'at least ' : ''}${count} records, more than the cap of ${cap} (maxRangePoints); ` +
      'use a larger interval, a narrower time range, or a limit',
    { details: { parameter: 'interval', count, cap } },
  )
}

/**
 * `offset`, `limit` and the cap over a bucketed answer, counted in buckets;
 * items past the page are counted but never kept (or decoded).
 */
export class Page<T> {
  readonly #offset: number
  readonly #end: number
  readonly #cap: number
  readonly #kept: [T, number, number][] = []
  #position = 0

  constructor(paging: Paging, cap: number) {
    this.#offset = paging.offset
    this.#end = paging.limit === undefined ? Number.POSITIVE_INFINITY : paging.offset + paging.limit
    this.#cap = cap
  }

  /** Takes one bucket's item; false once the page is full. */
  add(item: T): boolean {
    return this.#take(item, 1)
  }

  /** Takes a span of `last - first + 1` buckets; false once the page is full. */
  addSpan(span: T & { readonly first: number; readonly last: number }): boolean {
    return this.#take(span, span.last - span.first + 1)
  }

  /** The kept items. */
  finish(): T[] {
    this.#check()
    return this.#kept.map(([item]) => item)
  }

  /** The kept spans, each with the first and last of its buckets inside the page. */
  finishSpans(): [T, number, number][] {
    this.#check()
    return this.#kept
  }

  /** Keeps the part of `size` buckets inside `offset..end`; the spans' own bucket numbers are offset by `skip`. */
  #take(item: T, size: number): boolean {
    const start = this.#position
    this.#position += size
    const from = Math.max(start, this.#offset)
    const until = Math.min(this.#position, this.#end)
    if (from < until && this.#kept.length <= this.#cap) {
      const first = (item as { first?: number }).first ?? 0
      this.#kept.push([item, first + (from - start), first + (until - 1 - start)])
    }
    return this.#position < this.#end
  }

  /** Refuses an answer over the cap, with the size it would have had. */
  #check(): void {
    const count = Math.max(0, Math.min(this.#position, this.#end) - this.#offset)
    if (count > this.#cap) throw rangeTooLarge(count, this.#cap, false)
  }
}
