/**
 * export() on the suite's backend: every record, symbols in the store's
 * order, each oldest first, as latest() returns them, over sealed and open
 * hours; the symbols and window selection; one view while writes go on; an
 * abort; bad options. Expected lines come from the reference model.
 */
import { describe, expect, it } from 'vitest'
import type { NewPriceRecord, PriceRecord } from '../../../src/index.js'
import { T0, TEST_PROVIDER, makeRecord } from '../../../src/testing/records.js'
import { compareRecords, compareUtf8, storedRecords } from '../../../src/testing/reference-model.js'
import { rejectsCode } from '../../support/assertions.js'
import { type FeatureTests, useStores } from './context.js'
import { HOUR } from './model.js'

/** The model's records in export order: symbols by UTF-8 bytes, then (timestamp, id), as JSON lines. */
export function modelExport(writes: readonly NewPriceRecord[], keep: (record: PriceRecord) => boolean = () => true): string[] {
  return storedRecords(writes, TEST_PROVIDER)
    .filter(keep)
    .sort((a, b) => compareUtf8(a.symbol, b.symbol) || compareRecords(a, b))
    .map((record) => JSON.stringify(record))
}

export async function exportLines(records: AsyncIterable<PriceRecord>): Promise<string[]> {
  const out: string[] = []
  for await (const record of records) out.push(JSON.stringify(record))
  return out
}

/**
 * Writes that leave sealed hours, an hour both sealed and open (a late
 * record and a rewrite of a sealed record) and an open hour: hours 0-3 are
 * sealed once a record of hour 5 arrives, hour 1 then gets late records.
 */
export function layeredWrites(): NewPriceRecord[][] {
  const early: NewPriceRecord[] = []
  for (let hour = 0; hour < 4; hour++) {
    for (const symbol of ['BTC', 'ETH', 'BTC-USD', '\u{1F600}', '\uFF61']) {
      early.push(makeRecord({ symbol, timestamp: T0 + hour * HOUR + 7_000 }), makeRecord({ symbol, timestamp: T0 + hour * HOUR + 1_800_000 }))
    }
  }
  // Two ids at one timestamp: both kept, ordered by UTF-8 bytes.
  early.push(makeRecord({ symbol: 'BTC', timestamp: T0 + 60_000, id: '\uFF61' }), makeRecord({ symbol: 'BTC', timestamp: T0 + 60_000, id: '\u{1F600}' }))
  const later = [makeRecord({ symbol: 'BTC', timestamp: T0 + 5 * HOUR + 1 }), makeRecord({ symbol: 'SOL', timestamp: T0 + 5 * HOUR + 2, extra: 'kept' })]
  const late = [
    makeRecord({ symbol: 'ETH', timestamp: T0 + HOUR + 5 }),
    makeRecord({ symbol: 'BTC', timestamp: T0 + HOUR + 7_000, value: -1.5 }), // replaces a sealed record
  ]
  return [early, later, late]
}

export const exportTests: FeatureTests = (suite) => {
  describe('export', () => {
    const { openStore } = useStores(suite)

    async function layered() {
      const store = await openStore({ cache: { recordsPerSymbol: 0 } })
      const writes: NewPriceRecord[] = []
      for (const batch of layeredWrites()) {
        await store.putMany(batch)
        writes.push(...batch)
      }
      return { store, writes }
    }

    it('gives every record, symbols in the store order, each oldest first, as latest() returns them, sealed and open hours alike', async () => {
      const { store, writes } = await layered()
      const stats = await store.stats()
      expect(stats.unsealedRecords).toBeGreaterThan(0)
      expect(stats.unsealedRecords).toBeLessThan(stats.records)
      const exported = await exportLines(store.export())
      expect(exported).toEqual(modelExport(writes))
      const [newest] = await store.latest('SOL')
      expect(exported).toContain(JSON.stringify(newest))
    })

    it('selects symbols (in the store order, once, unknown ones giving nothing) and a window, both ends inclusive', async () => {
      const { store, writes } = await layered()
      const from = T0 + HOUR + 5
      const to = T0 + 3 * HOUR + 7_000
      const exported = await exportLines(store.export({ symbols: ['ETH', 'nope', 'BTC', 'ETH'], from, to }))
      expect(exported).toEqual(modelExport(writes, (r) => ['BTC', 'ETH'].includes(r.symbol) && r.timestamp >= from && r.timestamp <= to))
      expect(exported.length).toBeGreaterThan(4)
      expect(await exportLines(store.export({ symbols: [] }))).toEqual([])
      expect(await exportLines(store.export({ from: T0 + 5 * HOUR + 2 }))).toEqual(modelExport(writes, (r) => r.timestamp >= T0 + 5 * HOUR + 2))
    })

    it('reads one view: writes made while it runs are not in it', async () => {
      const { store, writes } = await layered()
      const want = modelExport(writes)
      const iterator = store.export()[Symbol.asyncIterator]()
      const first = await iterator.next()
      await store.putMany([makeRecord({ symbol: 'BTC', timestamp: T0 + 2 * HOUR }), makeRecord({ symbol: 'AAA', timestamp: T0 })])
      const rest: string[] = [JSON.stringify(first.value)]
      for (let step = await iterator.next(); step.done !== true; step = await iterator.next()) rest.push(JSON.stringify(step.value))
      expect(rest).toEqual(want)
      expect((await exportLines(store.export())).length).toBe(want.length + 2)
    })

    it('an abort makes the next pull reject with PRICE_ABORTED; bad options are refused at once', async () => {
      const { store } = await layered()
      const controller = new AbortController()
      const iterator = store.export({ signal: controller.signal })[Symbol.asyncIterator]()
      await iterator.next()
      controller.abort()
      await rejectsCode(iterator.next(), 'PRICE_ABORTED')
      const call = (options: unknown) => () => store.export(options as never)
      expect(call({ symbols: 'BTC' })).toThrow(expect.objectContaining({ code: 'PRICE_INVALID_SYMBOL' }))
      expect(call({ symbols: ['BTC USD'] })).toThrow(expect.objectContaining({ code: 'PRICE_INVALID_SYMBOL' }))
      expect(call({ from: 5, to: 4 })).toThrow(expect.objectContaining({ code: 'PRICE_INVALID_RANGE' }))
      expect(call({ from: -1 })).toThrow(expect.objectContaining({ code: 'PRICE_INVALID_RANGE' }))
      expect(call({ to: 1.5 })).toThrow(expect.objectContaining({ code: 'PRICE_INVALID_RANGE' }))
      expect(call('all')).toThrow(expect.objectContaining({ code: 'PRICE_INVALID_QUERY' }))
      expect(call({ signal: 'stop' })).toThrow(expect.objectContaining({ code: 'PRICE_INVALID_QUERY' }))
    })
  })
}
