/**
 * stats() on the suite's backend: record and symbol counts and each symbol's
 * first and last timestamps as the reference model computes them from the
 * writes, over sealed and open hours and after a reopen; an empty store;
 * the format version and provider; the disk usage (`null` on memory-level).
 */
import { describe, expect, it } from 'vitest'
import type { NewPriceRecord } from '../../../src/index.js'
import { TEST_PROVIDER } from '../../../src/testing/records.js'
import { compareUtf8, storedRecords } from '../../../src/testing/reference-model.js'
import { type FeatureTests, useStores } from './context.js'
import { layeredWrites } from './export.js'

/** The model's statistics (the parts that do not depend on the database). */
function modelStats(writes: readonly NewPriceRecord[]) {
  const records = storedRecords(writes, TEST_PROVIDER)
  const symbols = [...new Set(records.map((record) => record.symbol))].sort(compareUtf8)
  const perSymbol = symbols.map((symbol) => {
    const own = records.filter((record) => record.symbol === symbol).map((record) => record.timestamp)
    return { symbol, records: own.length, firstTimestamp: Math.min(...own), lastTimestamp: Math.max(...own) }
  })
  return { records: records.length, symbols: symbols.length, perSymbol }
}

export const statsTests: FeatureTests = (suite) => {
  describe('stats', () => {
    const { openStore, newDb, reopenDb } = useStores(suite)

    it('counts records and gives first and last timestamps per symbol, as the model does, before and after a reopen', async () => {
      const db = newDb()
      const store = await openStore({}, db)
      const writes = layeredWrites().flat()
      for (const batch of layeredWrites()) await store.putMany(batch)
      const stats = await store.stats()
      expect({ records: stats.records, symbols: stats.symbols, perSymbol: stats.perSymbol }).toEqual(modelStats(writes))
      expect(stats.unsealedRecords).toBeGreaterThan(0)
      expect(stats.formatVersion).toBe(9)
      expect(stats.provider).toEqual({ name: TEST_PROVIDER.name, id: TEST_PROVIDER.id, publicKey: TEST_PROVIDER.publicKey })
      if (suite.persistent === true) expect(stats.disk).toEqual({ bytes: expect.any(Number), measured: 'directory' })
      else expect(stats.disk).toBeNull()
      expect(JSON.parse(JSON.stringify(stats))).toEqual(stats)
      await store.close()
      // Reopened, every hour is sealed: counted from the heads index.
      const again = await openStore({}, reopenDb(db))
      const sealed = await again.stats()
      expect({ records: sealed.records, symbols: sealed.symbols, perSymbol: sealed.perSymbol }).toEqual(modelStats(writes))
      expect(sealed.unsealedRecords).toBe(0)
      if (suite.persistent === true) expect(sealed.disk?.bytes).toBeGreaterThan(0)
    })

    it('counts an empty store as empty', async () => {
      const store = await openStore()
      const stats = await store.stats()
      expect({ records: stats.records, symbols: stats.symbols, perSymbol: stats.perSymbol, unsealedRecords: stats.unsealedRecords }).toEqual({
        records: 0, symbols: 0, perSymbol: [], unsealedRecords: 0,
      })
    })
  })
}
