/**
 * Records and reads the in-process cluster tests share: batches of records one
 * second apart, and a store's whole export.
 */
import type { PriceRecord, PriceStore } from '../../../src/index.js'
import { T0, makeRecord, type InputRecord } from '../../../src/testing/records.js'

/** `count` records of `symbol`, one second apart from slot `from` (slot k is `T0 + k` seconds). */
export function timedBatch(from: number, count: number, symbol = 'BTC'): InputRecord[] {
  return Array.from({ length: count }, (_, i) => makeRecord({ symbol, timestamp: T0 + (from + i) * 1000 }))
}

/** Every record a store holds, in export order. */
export async function exportedRecords(store: PriceStore): Promise<PriceRecord[]> {
  const out: PriceRecord[] = []
  for await (const record of store.export()) out.push(record)
  return out
}
