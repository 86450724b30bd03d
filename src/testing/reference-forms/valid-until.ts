/**
 * The reference model of validity windows (docs/semantics.md, "Validity
 * windows"), by its definition: a record's `validUntil` is the timestamp of
 * the next record of its symbol among every stored record in (timestamp,
 * id) order, or `null` for the symbol's newest. Part of the model: shares
 * no code with src/engine or src/store.
 */
import type { PriceRecord } from '../../types.js'

/** Ascending (timestamp, id) order, ids by their UTF-8 bytes (written here again: the model shares no code). */
function order(a: PriceRecord, b: PriceRecord): number {
  return a.timestamp - b.timestamp || Buffer.compare(Buffer.from(a.id, 'utf8'), Buffer.from(b.id, 'utf8'))
}

/** `validUntil` of `record` among `stored` (every stored record, any order): the next one's timestamp, or null. */
export function referenceValidUntil(stored: readonly PriceRecord[], record: PriceRecord): number | null {
  let next: PriceRecord | undefined
  for (const other of stored) {
    if (other.symbol !== record.symbol || order(other, record) <= 0) continue
    if (next === undefined || order(other, next) < 0) next = other
  }
  return next === undefined ? null : next.timestamp
}

/** A function that copies a record with its `validUntil` (last, or in place of a stored field of that name). */
export function referenceMarker(stored: readonly PriceRecord[]): <T extends object>(record: T) => T {
  return <T extends object>(record: T): T => ({ ...record, validUntil: referenceValidUntil(stored, record as unknown as PriceRecord) }) as T
}
