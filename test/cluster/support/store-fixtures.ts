/**
 * Records and reads the in-process cluster tests share: batches of records one
 * second apart, a store's whole export, the model of a node that applied some
 * batches, and the error a promise rejects with.
 */
import { MemoryLevel } from 'memory-level'
import { toExactJson } from '../../../src/http.js'
import { PriceStore, type PriceRecord, type Provider } from '../../../src/index.js'
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

/** Every record a store holds, in export order, each as its exact JSON text (what a node's export would send). */
export async function exportedJson(store: PriceStore): Promise<string[]> {
  return (await exportedRecords(store)).map((record) => toExactJson(record))
}

/**
 * The model of a node that applied exactly `batches`, in this order: what a store given them directly exports
 * (exact JSON lines).
 */
export async function modelExport(provider: Provider, batches: readonly (readonly InputRecord[])[]): Promise<string[]> {
  const model = await PriceStore.open(new MemoryLevel(), { provider })
  try {
    for (const batch of batches) await model.putMany(batch)
    return await exportedJson(model)
  } finally {
    await model.close()
  }
}

/** The error `promise` rejects with (it must reject). */
export async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise
  } catch (err) {
    return err
  }
  throw new Error('expected a rejection')
}
