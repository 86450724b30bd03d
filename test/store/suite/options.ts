/**
 * Store options on the suite's backend: every malformed option refused with
 * PRICE_INVALID_OPTIONS, by the constructor and by open(); custom limits enforced.
 */
import { describe, expect, it } from 'vitest'
import { PriceStore } from '../../../src/index.js'
import type { PriceStoreOptions } from '../../../src/index.js'
import { TEST_PROVIDER } from '../../../src/testing/records.js'
import { rejectsCode, throwsCode } from '../../support/assertions.js'
import { type FeatureTests, useStores } from './context.js'

export const optionsTests: FeatureTests = (suite) => {
  describe('invalid options → PRICE_INVALID_OPTIONS', () => {
    const { newDb, openStore } = useStores(suite)

    const bad: [string, unknown][] = [
      ['undefined', undefined],
      ['null', null],
      ['no provider', {}],
      ['provider null', { provider: null }],
      ['provider without id', { provider: { name: 'redstone', publicKey: 'k' } }],
      ['provider with an empty name', { provider: { ...TEST_PROVIDER, name: '' } }],
      ['provider with a numeric publicKey', { provider: { ...TEST_PROVIDER, publicKey: 5 } }],
      ['limits null', { provider: TEST_PROVIDER, limits: null }],
      ['maxLimit 0', { provider: TEST_PROVIDER, limits: { maxLimit: 0 } }],
      ['maxLimit 1.5', { provider: TEST_PROVIDER, limits: { maxLimit: 1.5 } }],
      ['maxSymbols -1', { provider: TEST_PROVIDER, limits: { maxSymbols: -1 } }],
      ['maxRangePoints NaN', { provider: TEST_PROVIDER, limits: { maxRangePoints: Number.NaN } }],
      ['maxLimit as a string', { provider: TEST_PROVIDER, limits: { maxLimit: '10' } }],
      ['maxRangePoints Infinity', { provider: TEST_PROVIDER, limits: { maxRangePoints: Number.POSITIVE_INFINITY } }],
      ['sync as a string', { provider: TEST_PROVIDER, sync: 'yes' }],
      ['cache null', { provider: TEST_PROVIDER, cache: null }],
      ['cache.recordsPerSymbol -1', { provider: TEST_PROVIDER, cache: { recordsPerSymbol: -1 } }],
      ['cache.headBytes 2.5', { provider: TEST_PROVIDER, cache: { headBytes: 2.5 } }],
      ['cache.chunkBytes as a string', { provider: TEST_PROVIDER, cache: { chunkBytes: '64' } }],
      ['openBytes -1', { provider: TEST_PROVIDER, openBytes: -1 }],
    ]

    it.each(bad)('%s: the constructor throws', (_n, opts) => {
      throwsCode(() => new PriceStore(newDb(), opts as PriceStoreOptions), 'PRICE_INVALID_OPTIONS')
    })

    it.each(bad)('%s: PriceStore.open rejects', async (_n, opts) => {
      await rejectsCode(PriceStore.open(newDb(), opts as PriceStoreOptions), 'PRICE_INVALID_OPTIONS')
    })

    it('custom limits are enforced', async () => {
      const store = await openStore({ limits: { maxLimit: 5, maxSymbols: 2 } })
      await rejectsCode(store.latest('BTC', { limit: 6 }), 'PRICE_INVALID_QUERY')
      await rejectsCode(store.several(['A', 'B', 'C']), 'PRICE_INVALID_QUERY')
      await rejectsCode(store.query(new URLSearchParams('symbol=BTC&limit=6')), 'PRICE_INVALID_QUERY')
      await expect(store.latest('BTC', { limit: 5 })).resolves.toEqual([])
    })
  })
}
