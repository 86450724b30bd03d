/** The reference model of batch as-of (docs/semantics.md, "Batch as-of"): naive, one scan per entry. */
import type { PriceRecord } from '../../types.js'

/** One entry of the model's answer: the record in force and `time − timestamp`, or null. */
export type ReferenceBatchEntry = { readonly record: PriceRecord; readonly age: number } | null

/**
 * Batch as-of over every stored record (any order): for each symbol and each distinct time, the record at or
 * before it (`before`, the latest in (timestamp, id) order), at or after it (`after`, the first), or the nearer
 * (`nearest`, a tie going to before), within `tolerance` ms when given.
 */
export function referenceBatchAsOf(
  records: readonly PriceRecord[], symbols: readonly string[], times: readonly number[], direction: 'before' | 'after' | 'nearest', tolerance?: number,
): Record<string, Record<string, ReferenceBatchEntry>> {
  const answer: Record<string, Record<string, ReferenceBatchEntry>> = {}
  const order = (a: PriceRecord, b: PriceRecord) => a.timestamp - b.timestamp || (Buffer.compare(Buffer.from(a.id), Buffer.from(b.id)))
  for (const symbol of symbols) {
    const mine = records.filter((r) => r.symbol === symbol).sort(order)
    const row: Record<string, ReferenceBatchEntry> = {}
    for (const t of [...new Set(times)].sort((a, b) => a - b)) {
      const ok = (r: PriceRecord) => tolerance === undefined || Math.abs(t - r.timestamp) <= tolerance
      let before: PriceRecord | undefined
      for (const r of mine) if (r.timestamp <= t && ok(r)) before = r
      let after: PriceRecord | undefined
      for (const r of mine) if (r.timestamp >= t && ok(r)) { after = r; break }
      let chosen: PriceRecord | undefined
      if (direction === 'before') chosen = before
      else if (direction === 'after') chosen = after
      else if (before === undefined || after === undefined) chosen = before ?? after
      else chosen = t - before.timestamp <= after.timestamp - t ? before : after
      Object.defineProperty(row, String(t), { enumerable: true, writable: true, configurable: true, value: chosen === undefined ? null : { record: chosen, age: t - chosen.timestamp } })
    }
    Object.defineProperty(answer, symbol, { enumerable: true, writable: true, configurable: true, value: row })
  }
  return answer
}
