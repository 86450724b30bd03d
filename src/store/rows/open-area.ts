import { firstAtOrAbove } from '../../rules/sorted-search.js'
import { compareTimeAndId } from '../../rules/compare-ids.js'
import type { Row } from './row.js'

/** Runs a symbol's open rows in an hour keep before they are merged into one. */
const MAX_RUNS = 64

/**
 * The open rows of one symbol in one period: a sorted run per write that brought some, in write order, merged on
 * the first read. A batch adds its run without copying the rows held before it, so an hour that takes a few rows
 * from every batch (a late hour, a backfill) costs each batch its own rows, not the hour's; the merge is paid once
 * per area that reads the hour, by a query or by the seal.
 */
class RowRuns {
  readonly runs: readonly (readonly Row[])[]
  #merged: readonly Row[] | undefined

  constructor(runs: readonly (readonly Row[])[]) {
    this.runs = runs
  }

  /** The rows, ascending, without repeats: of rows with the same (timestamp, id), the later write's. */
  get rows(): readonly Row[] {
    this.#merged ??= mergeRuns(this.runs)
    return this.#merged
  }

  /**
   * The rows with a later write's run added. Runs already merged (a read came between the writes) stay merged, and
   * past {@link MAX_RUNS} they are merged here: a symbol written one record a batch and read after each batch pays
   * for one run per read, not one per batch since the hour began.
   */
  with(run: readonly Row[]): RowRuns {
    const runs = this.#merged !== undefined ? [this.#merged] : this.runs.length >= MAX_RUNS ? [this.rows] : this.runs
    return new RowRuns([...runs, run])
  }
}

/**
 * The rows of one period: its rows by symbol, the writes that brought them (oldest first: each names its log entry,
 * and the newer ones are what is left when a seal deletes the older entries), and their size.
 */
interface OpenPeriod {
  readonly symbols: ReadonlyMap<string, RowRuns>
  readonly writes: readonly OpenWrite[]
  readonly bytes: number
}

/** One batch's rows of one period, ready to be taken in. */
export interface OpenWrite {
  readonly period: number
  readonly logKey: Buffer
  readonly bytes: number
  /** Rows by symbol, in the batch's order (a later row with the same key replaces an earlier one). */
  readonly rows: ReadonlyMap<string, readonly Row[]>
}

/**
 * The open area: records written to the log and not yet sealed into chunks,
 * held in memory as rows sorted by (timestamp, id) per period and symbol.
 * It is immutable (each batch or seal makes a new one), so a reader that
 * captured it keeps a consistent view however writes go on.
 */
export class OpenArea {
  static readonly EMPTY = new OpenArea(new Map(), new Map(), 0)

  readonly #periods: ReadonlyMap<number, OpenPeriod>
  /** The periods holding rows of each symbol, ascending. */
  readonly #bySymbol: ReadonlyMap<string, readonly number[]>
  /** Bytes of log entries held: what sealing frees. */
  readonly bytes: number
  /** {@link OpenArea.periods}, once known: carried from area to area (merged, filtered) rather than sorted again. */
  #sorted: readonly number[] | undefined

  private constructor(
    periods: ReadonlyMap<number, OpenPeriod>, bySymbol: ReadonlyMap<string, readonly number[]>, bytes: number, sorted?: readonly number[],
  ) {
    this.#periods = periods
    this.#bySymbol = bySymbol
    this.bytes = bytes
    this.#sorted = sorted
  }

  /** The open rows of `symbol` in `period`, ascending; empty when none. */
  rows(symbol: string, period: number): readonly Row[] {
    return this.#periods.get(period)?.symbols.get(symbol)?.rows ?? NO_ROWS
  }

  /** The periods holding open rows of `symbol`, ascending. */
  periodsOf(symbol: string): readonly number[] {
    return this.#bySymbol.get(symbol) ?? NO_PERIODS
  }

  /** Every period with open rows, ascending (sealing asks after every batch: each area derives it from the last one's). */
  periods(): readonly number[] {
    this.#sorted ??= Object.freeze([...this.#periods.keys()].sort((a, b) => a - b))
    return this.#sorted
  }

  /** The rows of a period by symbol, and the log entries holding them. */
  period(period: number): OpenPeriod | undefined {
    return this.#periods.get(period)
  }

  /** The area with the writes of one committed batch (or one replayed log entry) added. */
  withWrites(writes: readonly OpenWrite[]): OpenArea {
    if (writes.length === 0) return this
    const periods = new Map(this.#periods)
    const bySymbol = new Map(this.#bySymbol)
    let bytes = this.bytes
    const added: number[] = []
    for (const write of writes) {
      const held = periods.get(write.period)
      if (held === undefined) added.push(write.period)
      const symbols = new Map(held?.symbols)
      for (const [symbol, written] of write.rows) {
        const before = symbols.get(symbol)
        symbols.set(symbol, withRun(before, written))
        if (before === undefined) bySymbol.set(symbol, insertSorted(bySymbol.get(symbol) ?? NO_PERIODS, write.period))
      }
      periods.set(write.period, {
        symbols,
        writes: [...(held?.writes ?? []), write],
        bytes: (held?.bytes ?? 0) + write.bytes,
      })
      bytes += write.bytes
    }
    const sorted = added.length === 0 ? this.#sorted : this.#sorted === undefined ? undefined : mergeSorted(this.#sorted, added)
    return new OpenArea(periods, bySymbol, bytes, sorted)
  }

  /**
   * The area without the oldest log entries of some periods, once they are sealed: `sealed` maps a period to how
   * many of its entries, oldest first, the seal deleted. A period keeps the rows of its newer entries (a batch that
   * came while it was being sealed), as those entries hold them; a period with none left is gone.
   */
  withoutEntries(sealed: ReadonlyMap<number, number>): OpenArea {
    const periods = new Map(this.#periods)
    const bySymbol = new Map(this.#bySymbol)
    const left = new Map<number, ReadonlySet<string>>()
    const touched = new Set<string>()
    let bytes = this.bytes
    for (const [period, count] of sealed) {
      const held = periods.get(period)
      if (held === undefined || count <= 0) continue
      for (const symbol of held.symbols.keys()) touched.add(symbol)
      const kept = held.writes.slice(count)
      bytes -= held.bytes
      if (kept.length === 0) {
        periods.delete(period)
        left.set(period, NO_SYMBOLS)
        continue
      }
      const rest = rebuild(kept)
      periods.set(period, rest)
      left.set(period, new Set(rest.symbols.keys()))
      bytes += rest.bytes
    }
    if (left.size === 0) return this
    for (const symbol of touched) {
      const periodsLeft = (bySymbol.get(symbol) ?? NO_PERIODS).filter((p) => left.get(p)?.has(symbol) !== false)
      if (periodsLeft.length === 0) bySymbol.delete(symbol)
      else bySymbol.set(symbol, Object.freeze(periodsLeft))
    }
    const sorted = this.#sorted === undefined ? undefined : Object.freeze(this.#sorted.filter((period) => periods.has(period)))
    return new OpenArea(periods, bySymbol, bytes, sorted)
  }
}

const NO_ROWS: readonly Row[] = Object.freeze([])
const NO_PERIODS: readonly number[] = Object.freeze([])
const NO_SYMBOLS: ReadonlySet<string> = new Set()

/** A period held by `writes` alone (in log order), rows merged as {@link OpenArea.withWrites} merges them. */
function rebuild(writes: readonly OpenWrite[]): OpenPeriod {
  const symbols = new Map<string, RowRuns>()
  let bytes = 0
  for (const write of writes) {
    for (const [symbol, written] of write.rows) symbols.set(symbol, withRun(symbols.get(symbol), written))
    bytes += write.bytes
  }
  return { symbols, writes, bytes }
}

/**
 * Merges rows into sorted rows without repeats: a written row replaces a
 * held one with the same (timestamp, id), and among written rows the later
 * one wins, as LevelDB's batches do.
 */
export function mergeRows(held: readonly Row[], written: readonly Row[]): readonly Row[] {
  const sorted = sortUnique(written)
  const last = held[held.length - 1]
  const first = sorted[0]
  // The usual case: every written row is newer than every held row.
  if (last === undefined || (first !== undefined && compareTimeAndId(first, last) > 0)) return Object.freeze([...held, ...sorted])
  const merged: Row[] = []
  let i = 0
  let j = 0
  while (i < held.length || j < sorted.length) {
    const a = held[i]
    const b = sorted[j]
    const order = a === undefined ? 1 : b === undefined ? -1 : compareTimeAndId(a, b)
    if (order < 0) merged.push(a as Row), i++
    else if (order > 0) merged.push(b as Row), j++
    else merged.push(b as Row), i++, j++
  }
  return Object.freeze(merged)
}

/** `before` (none: no rows yet) with a write's rows (in the batch's order) added as a run. */
function withRun(before: RowRuns | undefined, written: readonly Row[]): RowRuns {
  const run = Object.freeze(sortUnique(written))
  return before === undefined ? new RowRuns([run]) : before.with(run)
}

/** Sorted runs (in write order) merged: concatenated when each begins after the one before ends, as in-order writes do. */
function mergeRuns(runs: readonly (readonly Row[])[]): readonly Row[] {
  if (runs.length === 1) return runs[0] as readonly Row[]
  let ordered = true
  for (let i = 1; i < runs.length && ordered; i++) {
    const last = (runs[i - 1] as readonly Row[]).at(-1)
    const first = (runs[i] as readonly Row[])[0]
    ordered = last === undefined || first === undefined || compareTimeAndId(last, first) < 0
  }
  const all = runs.flat()
  return Object.freeze(ordered ? all : sortUnique(all))
}

/** Rows sorted by (timestamp, id), keeping the last of rows with the same key. */
function sortUnique(rows: readonly Row[]): Row[] {
  let ordered = true
  for (let i = 1; i < rows.length && ordered; i++) ordered = compareTimeAndId(rows[i - 1] as Row, rows[i] as Row) < 0
  if (ordered) return [...rows]
  // A stable sort keeps equal keys in write order, so the last of each run is the one to keep.
  const sorted = rows.map((row, index) => ({ row, index })).sort((a, b) => compareTimeAndId(a.row, b.row) || a.index - b.index)
  const unique: Row[] = []
  for (let i = 0; i < sorted.length; i++) {
    const next = sorted[i + 1]
    const row = (sorted[i] as { row: Row }).row
    if (next === undefined || compareTimeAndId(row, next.row) !== 0) unique.push(row)
  }
  return unique
}

/** `periods` (ascending) with `period` in its place: a binary search and one copy, no sort. */
function insertSorted(periods: readonly number[], period: number): readonly number[] {
  const lo = firstAtOrAbove(periods, period)
  if (periods[lo] === period) return periods
  return Object.freeze([...periods.slice(0, lo), period, ...periods.slice(lo)])
}

/** `sorted` (ascending) and `added` (none in `sorted`, any order) merged, ascending. */
function mergeSorted(sorted: readonly number[], added: readonly number[]): readonly number[] {
  const more = [...added].sort((a, b) => a - b)
  const merged = new Array<number>(sorted.length + more.length)
  let i = 0
  let j = 0
  let k = 0
  while (i < sorted.length || j < more.length) {
    const a = sorted[i]
    const b = more[j]
    if (b === undefined || (a !== undefined && a < b)) merged[k++] = a as number, i++
    else merged[k++] = b, j++
  }
  return Object.freeze(merged)
}
