import type { PriceAnswer, PriceQuery, PriceRecord } from '../types.js'
import { compareIds, compareTimeAndId } from '../rules/compare-ids.js'
import { DeferredAnswer } from './deferred-answer.js'
import { formFor } from './forms/index.js'
import { forEachRow, refOf, rowsOf } from './kernels/rows.js'
import type { ScanSource } from './scan-source.js'

/*
 * Validity windows (docs/semantics.md, "Validity windows"): on request
 * (`validUntil=true`), every record in an answer carries `validUntil`, the
 * timestamp of the next record of its symbol in the whole store in
 * (timestamp, id) order, or `null` for the symbol's newest record. A record
 * is in force at T when `timestamp <= T < validUntil` (`validUntil` null:
 * no end), which picks exactly the record the as-of lookup picks at T. A
 * record followed by one of the same millisecond (a larger id) has
 * `validUntil` equal to its own timestamp: an empty window, never in force.
 *
 * The successors are looked up through the scan port (forward reads from
 * each record, a few rows at a time), never from the answer alone: the next
 * record may lie outside the answer's window, page or sample.
 */

/** The name `validUntil` takes in an answer's records. */
export const VALID_UNTIL = 'validUntil'

/** A record's place in the store's order. */
export interface RecordKey {
  readonly timestamp: number
  readonly id: string
}

/** Rows read per forward read at first; a read that finds only ties of the millisecond reads twice as many next. */
const READ_ROWS = 16

/**
 * The `validUntil` of each of `keys` (one symbol's records, ascending in
 * (timestamp, id), distinct): the timestamp of the first record of `symbol`
 * after it, `null` when there is none. One forward read of a few rows
 * serves every key it passes, so a run of adjacent records costs one read
 * per {@link READ_ROWS}, and scattered ones one read each.
 */
export async function successorTimes(source: ScanSource, symbol: string, keys: readonly RecordKey[]): Promise<(number | null)[]> {
  const times: (number | null)[] = new Array<number | null>(keys.length)
  let next = 0
  let limit = READ_ROWS
  while (next < keys.length) {
    const start = next
    let seen = 0
    await forEachRow(rowsOf(source, symbol, { from: (keys[next] as RecordKey).timestamp, reverse: false, limit }), (row) => {
      seen++
      while (next < keys.length && isAfter(row.timestamp, row, keys[next] as RecordKey)) times[next++] = row.timestamp
      return next < keys.length
    })
    if (next < keys.length && seen < limit) {
      // The read reached the symbol's newest record: nothing follows the keys left.
      for (; next < keys.length; next++) times[next] = null
    }
    // Only records of the key's own millisecond were read (ties): read further next time.
    limit = next === start ? limit * 2 : READ_ROWS
  }
  return times
}

/** Whether a row (its timestamp, and its id read only on a tie) comes after `key`. */
function isAfter(timestamp: number, row: Parameters<typeof refOf>[0], key: RecordKey): boolean {
  return timestamp > key.timestamp || (timestamp === key.timestamp && compareIds(refOf(row).id, key.id) > 0)
}

/**
 * The answer to `query` with `validUntil` on every record in it (the query
 * asked for it: the parser lets only the latest, several and range forms
 * ask). The records are found as `fields` finds them, by the form's
 * `selectFields` (forms/), which reaches every record of its answer. A deferred
 * answer stays deferred: its rows' successors are found now, and each item
 * gets its `validUntil` as it is built. Records are copied, never changed;
 * `validUntil` is their last key (or replaces a stored field of that name in place).
 */
export async function withValidUntil(answer: PriceAnswer | DeferredAnswer, query: PriceQuery, source: ScanSource): Promise<PriceAnswer | DeferredAnswer> {
  if (answer instanceof DeferredAnswer) {
    const keys = answer.refs()
    const symbol = (query as { readonly symbol: string }).symbol
    return answer.withValidUntil(await timesInOrder(source, symbol, keys))
  }
  const bySymbol = new Map<string, RecordKey[]>()
  mapRecords(answer, query, (record) => {
    const keys = bySymbol.get(record.symbol)
    if (keys === undefined) bySymbol.set(record.symbol, [record])
    else keys.push(record)
    return record
  })
  const found = new Map<string, Map<string, number | null>>()
  for (const [symbol, keys] of bySymbol) {
    const sorted = distinctSorted(keys)
    const times = await successorTimes(source, symbol, sorted)
    found.set(symbol, new Map(sorted.map((key, i) => [keyText(key), times[i] as number | null])))
  }
  return mapRecords(answer, query, (record) => ({ ...record, [VALID_UNTIL]: found.get(record.symbol)?.get(keyText(record)) ?? null }))
}

/** {@link successorTimes} of keys in any order, repeats allowed (a deferred answer's rows are newest first for latest-N), in that order. */
export async function timesInOrder(source: ScanSource, symbol: string, keys: readonly RecordKey[]): Promise<(number | null)[]> {
  const sorted = distinctSorted(keys)
  const times = await successorTimes(source, symbol, sorted)
  const byKey = new Map(sorted.map((key, i) => [keyText(key), times[i] as number | null]))
  return keys.map((key) => byKey.get(keyText(key)) ?? null)
}

function distinctSorted(keys: readonly RecordKey[]): RecordKey[] {
  const sorted = [...keys].sort(compareTimeAndId)
  return sorted.filter((key, i) => i === 0 || compareTimeAndId(sorted[i - 1] as RecordKey, key) !== 0)
}

function keyText(key: RecordKey): string {
  return `${key.timestamp}\u0000${key.id}`
}

/** The answer with `map` applied to every record in it, as the form's `fields` selection reaches them; the rest kept. */
function mapRecords(answer: PriceAnswer, query: PriceQuery, map: (record: PriceRecord) => PriceRecord): PriceAnswer {
  const select = formFor(query).selectFields
  return select === undefined ? answer : select(answer, query, map as <T extends object>(record: T) => T)
}
