import { periodOf } from '../../../keys/key-layout.js'
import type { JournalRecord } from '../../../keys/journal-codec.js'
import type { PriceRecord } from '../../../types.js'
import type { OpenWrite } from '../../rows/open-area.js'
import type { Row } from '../../rows/row.js'

/**
 * One commit as live watchers receive it: its rows in batch order (views of
 * the batch's log entries, shared with the open area), each decoded once,
 * when the first watcher asks, and kept here rather than on the row, so the
 * open area does not grow by every decoded record.
 */
export class CommitNotice {
  readonly position: number
  readonly rows: readonly Row[]
  /** The tag of the replication log's id of the commit, when it has one (portable-position.ts). */
  readonly commitTag: string | undefined
  readonly #records: (PriceRecord | undefined)[]
  #bySymbol: Map<string, number[]> | undefined

  constructor(position: number, rows: readonly Row[], commitTag?: string) {
    this.position = position
    this.rows = rows
    this.commitTag = commitTag
    this.#records = new Array(rows.length)
  }

  /** The record of row `index`. */
  record(index: number): PriceRecord {
    let record = this.#records[index]
    if (record === undefined) this.#records[index] = record = (this.rows[index] as Row).decode()
    return record
  }

  /** The indices of the rows of `symbols`, in batch order. */
  select(symbols: ReadonlySet<string>): readonly number[] {
    if (this.#bySymbol === undefined) {
      this.#bySymbol = new Map()
      this.rows.forEach((row, index) => {
        const list = this.#bySymbol?.get(row.symbol)
        if (list === undefined) this.#bySymbol?.set(row.symbol, [index])
        else list.push(index)
      })
    }
    const lists: number[][] = []
    for (const symbol of symbols) {
      const list = this.#bySymbol.get(symbol)
      if (list !== undefined) lists.push(list)
    }
    if (lists.length <= 1) return lists[0] ?? []
    return lists.flat().sort((a, b) => a - b)
  }
}

/**
 * A committed batch's rows in the order of its records: each record's row
 * is the next unread one of its hour and symbol in the batch's writes (which
 * keep the batch's order), then a key written twice keeps its last place.
 */
export function rowsInCommitOrder(records: readonly JournalRecord[], writes: readonly OpenWrite[]): Row[] {
  const byPeriod = new Map(writes.map((write) => [write.period, write.rows]))
  const taken = new Map<readonly Row[], number>()
  const rows = records.map((record) => {
    const list = byPeriod.get(periodOf(record.timestamp))?.get(record.symbol) as readonly Row[]
    const index = taken.get(list) ?? 0
    taken.set(list, index + 1)
    return list[index] as Row
  })
  return lastOfEachKey(rows)
}

/**
 * The items with each (symbol, timestamp, id) once, at the place of its last
 * occurrence: a batch that writes one key twice stores the last, and
 * watchers see it once.
 */
export function lastOfEachKey<T extends JournalRecord>(items: readonly T[]): T[] {
  const seen = new Set<string>()
  const kept: T[] = []
  for (let i = items.length - 1; i >= 0; i--) {
    const item = items[i] as T
    const key = `${item.symbol}\u0000${item.timestamp}\u0000${item.id}`
    if (seen.has(key)) continue
    seen.add(key)
    kept.push(item)
  }
  return kept.reverse()
}
