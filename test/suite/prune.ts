/**
 * prune() on the suite's backend: records before `before` go (of one symbol
 * or all) and never one at or after it, sealed and open hours alike, with the
 * result the reference model reports; every query form then answers as the
 * model over what is left, after a reopen too; dry runs and bad options.
 */
import { describe, expect, it } from 'vitest'
import type { PriceAnswer, PriceRecord, PriceStore, QueryParams } from '../../src/index.js'
import { T0, TEST_PROVIDER, makeRecord, type InputRecord } from '../../src/testing/records.js'
import { compareUtf8, outcomeOf, referencePrune, referenceQuery, storedRecords } from '../../src/testing/reference-model.js'
import { rejectsCode } from '../support/assertions.js'
import { type FeatureTests, useStores } from './context.js'
import { HOUR, MAX, MINUTE } from './model.js'

const DAY = 24 * HOUR
const LIMITS = { maxLimit: 100_000, maxSymbols: 100, maxRangePoints: 100_000 }
const SYMBOLS = ['BTC', 'BTC-USD', 'ETH']

/** One record a `step` ms for `count` steps from `start`, for each symbol. */
function series(symbols: readonly string[], start: number, step: number, count: number): InputRecord[] {
  return symbols.flatMap((symbol) => Array.from({ length: count }, (_, i) => makeRecord({ symbol, timestamp: start + i * step })))
}

/** Every query form that shows what a store holds, against the model over `left`. */
async function expectHolds(store: PriceStore, left: readonly PriceRecord[], label = ''): Promise<void> {
  const check = async (params: QueryParams, run: () => Promise<PriceAnswer>): Promise<void> => {
    expect(await outcomeOf(run), `${label} ${JSON.stringify(params)}`).toEqual(referenceQuery(left, params, { provider: TEST_PROVIDER, limits: LIMITS }))
  }
  for (const symbol of SYMBOLS) {
    await check({ symbol, limit: '100000' }, () => store.latest(symbol, { limit: 100_000 }))
    for (const interval of [1, 10 * MINUTE, HOUR]) {
      const params = { symbol, fromTimestamp: '0', toTimestamp: String(MAX), interval: String(interval) }
      await check(params, () => store.range(symbol, { from: 0, to: MAX, interval }))
    }
    await check({ symbol, toTimestamp: String(T0 + 2 * HOUR) }, () => store.latest(symbol, { to: T0 + 2 * HOUR }))
  }
  await check({}, () => store.several())
  expect(await store.symbols(), `${label} symbols()`).toEqual([...new Set(left.map((r) => r.symbol))].sort(compareUtf8))
}

export const pruneTests: FeatureTests = (suite) => {
  describe('prune', () => {
    const { openStore, newDb, reopenDb } = useStores(suite)

    /** Writes, closes (sealing every hour) and reopens: every record is in a chunk. */
    async function sealedStore(records: readonly InputRecord[]): Promise<{ store: PriceStore; reopen: () => Promise<PriceStore> }> {
      const db = newDb()
      const first = await openStore({ limits: LIMITS }, db)
      await first.putMany(records)
      await first.close()
      const store = await openStore({ limits: LIMITS }, reopenDb(db))
      return {
        store,
        reopen: async () => {
          await store.close()
          return openStore({ limits: LIMITS }, reopenDb(db))
        },
      }
    }

    it('cuts an hour in two: records before `before` go, the rest stays, in every query form, after a reopen too', async () => {
      const records = series(SYMBOLS, T0, 7 * MINUTE + 13, 60)
      const { store, reopen } = await sealedStore(records)
      const before = T0 + 2 * HOUR + 23 * MINUTE + 5
      const model = referencePrune(storedRecords(records, TEST_PROVIDER), before)
      expect(await store.prune({ before })).toEqual(model.result)
      await expectHolds(store, model.left)
      // Pruning again removes nothing more.
      expect(await store.prune({ before })).toEqual({ records: 0, hours: 0, symbols: [] })
      await expectHolds(await reopen(), model.left, 'reopened')
    })

    it('removes records still in the open area too, and a symbol left with none leaves symbols()', async () => {
      const store = await openStore({ limits: LIMITS })
      const records = series(SYMBOLS, T0, 6 * MINUTE + 1, 40)
      await store.putMany(records)
      const stored = storedRecords(records, TEST_PROVIDER)
      const model = referencePrune(stored, T0 + 3 * HOUR + 7 * MINUTE)
      expect(await store.prune({ before: T0 + 3 * HOUR + 7 * MINUTE })).toEqual(model.result)
      await expectHolds(store, model.left)
      const all = referencePrune(model.left, MAX, 'ETH')
      expect(await store.prune({ before: MAX, symbol: 'ETH' })).toEqual(all.result)
      expect(all.result.symbols).toEqual(['ETH'])
      await expectHolds(store, all.left)
    })

    it('of one symbol touches no other; an unknown symbol removes nothing', async () => {
      const records = series(SYMBOLS, T0, 9 * MINUTE, 30)
      const { store } = await sealedStore(records)
      expect(await store.prune({ before: T0 + DAY, symbol: 'NOPE' })).toEqual({ records: 0, hours: 0, symbols: [] })
      const model = referencePrune(storedRecords(records, TEST_PROVIDER), T0 + DAY, 'BTC')
      expect(await store.prune({ before: T0 + DAY, symbol: 'BTC' })).toEqual(model.result)
      await expectHolds(store, model.left)
      const cut = referencePrune(model.left, T0 + 90 * MINUTE + 1, 'BTC-USD')
      expect(await store.prune({ before: T0 + 90 * MINUTE + 1, symbol: 'BTC-USD' })).toEqual(cut.result)
      await expectHolds(store, cut.left)
    })

    it('a dry run reports what a prune removes and removes nothing', async () => {
      const store = await openStore({ limits: LIMITS })
      const records = series(SYMBOLS, T0, 6 * MINUTE + 1, 40)
      await store.putMany(records)
      const before = T0 + 3 * HOUR + 7 * MINUTE
      const stored = storedRecords(records, TEST_PROVIDER)
      for (const symbol of [undefined, 'ETH', 'NOPE']) {
        const model = referencePrune(stored, before, symbol)
        expect(await store.prune({ before, dryRun: true, ...(symbol === undefined ? {} : { symbol }) })).toEqual(model.result)
      }
      await expectHolds(store, stored)
    })

    it('refuses bad options with a coded error and changes nothing; PRICE_NOT_OPEN after close', async () => {
      const records = series(SYMBOLS, T0, 10 * MINUTE, 10)
      const { store } = await sealedStore(records)
      await rejectsCode(store.prune(undefined as never), 'PRICE_INVALID_QUERY')
      await rejectsCode(store.prune({ before: -1 }), 'PRICE_INVALID_RANGE')
      await rejectsCode(store.prune({ before: 1.5 }), 'PRICE_INVALID_RANGE')
      await rejectsCode(store.prune({ before: T0 + DAY, symbol: 'A,B' }), 'PRICE_INVALID_SYMBOL')
      await rejectsCode(store.prune({ before: T0 + DAY, dryRun: 'yes' as never }), 'PRICE_INVALID_QUERY')
      await expectHolds(store, storedRecords(records, TEST_PROVIDER))
      await store.close()
      await rejectsCode(store.prune({ before: 1 }), 'PRICE_NOT_OPEN')
    })
  })
}
