import type { ScanOptions, ScanSource } from '../../engine/scan-source.js'
import type { QueryPlan } from '../../engine/query-plan.js'
import { compareTimeAndId } from '../../rules/compare-ids.js'
import type { Row as StoredRow } from '../rows/row.js'

/** The newest rows of one symbol, newest first. Never mutated: a write installs a new tail. */
interface Tail {
  readonly rows: readonly StoredRow[]
  /** True when `rows` holds every record of the symbol. */
  readonly complete: boolean
}

const EMPTY_COMPLETE_TAIL: Tail = Object.freeze({ rows: Object.freeze([]), complete: true })

/**
 * An in-memory cache of the newest `perSymbol` records of each symbol read so
 * far, kept equal to the disk: every committed batch is merged in before its
 * `putMany` resolves, and a tail loaded from disk is dropped if a write to
 * its symbol landed while it loaded. Tails are immutable, so a view captured
 * in one synchronous step reflects all or none of every batch.
 */
export class HotTails {
  readonly perSymbol: number
  /** The tails; shared with every view captured since the last change, so the next change copies it first. */
  #tails = new Map<string, Tail>()
  /** Whether a view holds `#tails` itself. */
  #shared = false
  /** Bumped by every batch that touches the symbol; a load started at an older version is stale. */
  readonly #versions = new Map<string, number>()

  constructor(perSymbol: number) {
    this.perSymbol = perSymbol
  }

  /** The write version of a symbol, to pass back to {@link HotTails.install}. */
  version(symbol: string): number {
    return this.#versions.get(symbol) ?? 0
  }

  has(symbol: string): boolean {
    return this.#tails.has(symbol)
  }

  /**
   * Installs a tail read from disk, newest first, unless a write to the
   * symbol committed after `version` was taken.
   */
  install(symbol: string, version: number, rows: readonly StoredRow[]): void {
    if (this.version(symbol) !== version) return
    this.#own().set(symbol, { rows: Object.freeze([...rows]), complete: rows.length < this.perSymbol })
  }

  /**
   * Merges a committed batch's rows, grouped by symbol. Call synchronously
   * after the commit. A symbol in `newSymbols` had no records before, so the
   * batch alone is its whole tail.
   */
  apply(rowsBySymbol: ReadonlyMap<string, readonly StoredRow[]>, newSymbols: ReadonlySet<string>): void {
    for (const [symbol, written] of rowsBySymbol) {
      this.#versions.set(symbol, this.version(symbol) + 1)
      const tail = this.#tails.get(symbol) ?? (newSymbols.has(symbol) ? EMPTY_COMPLETE_TAIL : undefined)
      if (tail !== undefined) this.#own().set(symbol, merge(tail, written, this.perSymbol))
    }
  }

  /**
   * Drops the rows of `symbol` with `from <= timestamp < to`, after a prune
   * removed them from the disk, and makes a load under way stale. What is
   * left is still the symbol's newest records, so the tail keeps its
   * `complete` flag.
   */
  drop(symbol: string, from: number, to: number): void {
    this.#versions.set(symbol, this.version(symbol) + 1)
    const tail = this.#tails.get(symbol)
    if (tail === undefined) return
    const rows = tail.rows.filter((row) => row.timestamp < from || row.timestamp >= to)
    if (rows.length !== tail.rows.length) this.#own().set(symbol, { rows: Object.freeze(rows), complete: tail.complete })
  }

  /** The tails, to change: a copy when a view holds them (copied once per change after a capture, not per query). */
  #own(): Map<string, Tail> {
    if (this.#shared) {
      this.#tails = new Map(this.#tails)
      this.#shared = false
    }
    return this.#tails
  }

  /**
   * A view of the tails of `symbols` as they are now, or `undefined` when
   * some symbol has no tail loaded. Symbols absent from `known` have no
   * records and need none.
   */
  capture(symbols: readonly string[], known: { has(symbol: string): boolean }): TailView | undefined {
    const tails = this.#tails
    const present: string[] = []
    for (const symbol of symbols) {
      if (!known.has(symbol)) continue
      if (!tails.has(symbol)) return undefined
      present.push(symbol)
    }
    this.#shared = true
    return new TailView(tails, present)
  }
}

/**
 * A frozen moment of the hot tails, readable as a scan source when it can
 * answer a query alone. `symbols()` lists the captured symbols in the order
 * given to `capture`, which for "every symbol" is UTF-8 byte order.
 */
export class TailView implements ScanSource {
  readonly #tails: ReadonlyMap<string, Tail>
  readonly #symbols: readonly string[]

  constructor(tails: ReadonlyMap<string, Tail>, symbols: readonly string[]) {
    this.#tails = tails
    this.#symbols = symbols
  }

  /**
   * Whether the captured tails hold every row the plan's reads need: a
   * newest-first read needs its newest `limit` rows, any other read all
   * rows of its window.
   */
  canAnswer(plan: QueryPlan): boolean {
    // Loops, not nested every(): a several-tokens query asks this of every symbol, and a closure per symbol showed.
    for (const symbol of this.#symbols) {
      for (const read of plan.reads) {
        if (!this.#covers(symbol, read, read.reverse ? read.limit ?? Number.POSITIVE_INFINITY : Number.POSITIVE_INFINITY)) return false
      }
    }
    return true
  }

  async *scan(symbol: string, options: ScanOptions): AsyncGenerator<readonly StoredRow[]> {
    yield this.scanNow(symbol, options)
  }

  scanNow(symbol: string, options: ScanOptions): readonly StoredRow[] {
    const rows = this.#tails.get(symbol)?.rows ?? []
    const limit = options.limit ?? Number.POSITIVE_INFINITY
    const found: StoredRow[] = []
    if (options.reverse) {
      // Newest first, as the tail is stored: stop as soon as the limit is reached.
      for (let i = 0; i < rows.length && found.length < limit; i++) {
        const row = rows[i] as StoredRow
        if (inside(row.timestamp, options)) found.push(row)
        else if (options.from !== undefined && row.timestamp < options.from) break
      }
    } else {
      for (let i = rows.length - 1; i >= 0 && found.length < limit; i--) {
        const row = rows[i] as StoredRow
        if (inside(row.timestamp, options)) found.push(row)
        else if (options.to !== undefined && row.timestamp > options.to) break
      }
    }
    return found
  }

  async symbols(): Promise<readonly string[]> {
    return this.#symbols
  }

  /**
   * The newest `needed` records of the window are all in the tail when the
   * tail holds that many of them, holds the whole symbol, or starts before
   * the window does (anything older than the tail is older than `from`).
   */
  #covers(symbol: string, window: { readonly from?: number; readonly to?: number }, needed: number): boolean {
    const tail = this.#tails.get(symbol)
    if (tail === undefined) return true
    if (tail.complete) return true
    const { rows } = tail
    const oldest = rows[rows.length - 1]
    if (oldest !== undefined && window.from !== undefined && window.from > oldest.timestamp) return true
    // Newest first: the rows inside the window run from the first at or before `to` while at or after `from`.
    let at = window.to === undefined ? 0 : firstAtOrBefore(rows, window.to)
    let matching = 0
    for (; at < rows.length && (window.from === undefined || (rows[at] as StoredRow).timestamp >= window.from); at++) {
      if (++matching >= needed) return true
    }
    return false
  }
}

/** The index of the first of `rows` (newest first) at or before `timestamp`; `rows.length` when none is. */
function firstAtOrBefore(rows: readonly StoredRow[], timestamp: number): number {
  let lo = 0
  let hi = rows.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if ((rows[mid] as StoredRow).timestamp > timestamp) lo = mid + 1
    else hi = mid
  }
  return lo
}

function inside(timestamp: number, window: { readonly from?: number; readonly to?: number }): boolean {
  return (window.from === undefined || timestamp >= window.from) && (window.to === undefined || timestamp <= window.to)
}

/**
 * Merges written rows into a tail, newest first. In an incomplete tail, rows
 * older than its oldest row are not part of the newest records and stay on
 * disk only. A written row replaces a cached one with the same key.
 */
function merge(tail: Tail, written: readonly StoredRow[], perSymbol: number): Tail {
  const newestFirst = [...written].sort((a, b) => compareTimeAndId(b, a))
  const newestCached = tail.rows[0]
  const oldestWritten = newestFirst[newestFirst.length - 1]
  // The usual case, appends: every written row is newer than the tail, with no key repeated.
  if (oldestWritten !== undefined && (newestCached === undefined || compareTimeAndId(oldestWritten, newestCached) > 0) && !hasRepeatedKey(newestFirst)) {
    const rows = newestFirst.length >= perSymbol ? newestFirst.slice(0, perSymbol) : [...newestFirst, ...tail.rows.slice(0, perSymbol - newestFirst.length)]
    return { rows: Object.freeze(rows), complete: tail.complete && newestFirst.length + tail.rows.length <= perSymbol }
  }
  // Otherwise one merge of the two newest-first lists, stopping at `perSymbol` rows.
  const oldest = tail.rows[tail.rows.length - 1]
  const incoming = lastOfEachKey(newestFirst)
  const rows: StoredRow[] = []
  let i = 0
  let j = 0
  while (rows.length < perSymbol && (i < tail.rows.length || j < incoming.length)) {
    const held = tail.rows[i]
    const row = incoming[j]
    if (row !== undefined && !tail.complete && oldest !== undefined && compareTimeAndId(row, oldest) < 0) {
      // Older than an incomplete tail's oldest row: not among the newest records, and neither is any after it.
      j = incoming.length
      continue
    }
    const order = row === undefined ? -1 : held === undefined ? 1 : compareTimeAndId(row, held)
    if (order >= 0) rows.push(row as StoredRow), j++
    else rows.push(held as StoredRow)
    if (order <= 0) i++
  }
  return { rows: Object.freeze(rows), complete: tail.complete && i === tail.rows.length && j === incoming.length }
}

/** Sorted rows (newest first, equal keys in write order) with only the last written row of each key. */
function lastOfEachKey(sorted: readonly StoredRow[]): StoredRow[] {
  const unique: StoredRow[] = []
  for (let i = 0; i < sorted.length; i++) {
    const next = sorted[i + 1]
    if (next === undefined || compareTimeAndId(sorted[i] as StoredRow, next) !== 0) unique.push(sorted[i] as StoredRow)
  }
  return unique
}

/** Whether sorted rows hold the same key twice (a batch may rewrite a record it also writes). */
function hasRepeatedKey(sorted: readonly StoredRow[]): boolean {
  for (let i = 1; i < sorted.length; i++) if (compareTimeAndId(sorted[i - 1] as StoredRow, sorted[i] as StoredRow) === 0) return true
  return false
}
