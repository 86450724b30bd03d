/**
 * query() on the suite's backend: every GET /prices form answered as the typed
 * methods answer it, bad parameters refused with codes, unknown symbols, and the
 * typed methods' own argument checks.
 */
import { describe, expect, it } from 'vitest'
import { TEST_PROVIDER } from '../../../src/testing/records.js'
import { expectExact, rejectsCode } from '../../support/assertions.js'
import { type FeatureTests, useStores } from './context.js'
import { H, MAX, MINUTE, collect } from './model.js'

export const queryTests: FeatureTests = (suite) => {
  describe('query', () => {
    const { openStore, seeded } = useStores(suite)

    it('an unknown symbol is not an error: [] for single-symbol forms, left out of several', async () => {
      const { store } = await seeded()
      expect(await store.latest('NOPE')).toEqual([])
      expect(await store.latest('BT')).toEqual([])
      expect(await store.range('NOPE', { from: 0, to: MAX, interval: 1 })).toEqual([])
      expect(await collect(store.rangeStream('NOPE', { from: 0, to: MAX, interval: 1 }))).toEqual([])
      expect(await store.query({ symbol: 'NOPE' })).toEqual([])
      expect(await store.query({ symbol: 'NOPE', interval: '1', fromTimestamp: '0', toTimestamp: '10' })).toEqual([])
      expect(await store.several(['NOPE'])).toEqual({})
      expect(Object.keys(await store.query({ symbols: 'NOPE,ETH' }))).toEqual(['ETH'])
      expect(await store.symbols()).not.toContain('NOPE')
    })

    it('query answers every form exactly like the typed methods', async () => {
      const { store, model } = await seeded()
      expectExact(await store.query(new URLSearchParams('symbol=BTC')), model.latest('BTC'))
      expectExact(await store.query(new URLSearchParams('symbol=BTC&limit=4&offset=1')), model.latest('BTC', { limit: 4, offset: 1 }))
      expectExact(
        await store.query(new URLSearchParams(`symbol=BTC&toTimestamp=${H + 30 * MINUTE}&limit=2`)),
        model.latest('BTC', { to: H + 30 * MINUTE, limit: 2 }),
      )
      expectExact(
        await store.query(new URLSearchParams(`symbol=ETH&fromTimestamp=${H + 20 * MINUTE}&toTimestamp=${H + 60 * MINUTE + 5}&limit=10`)),
        model.latest('ETH', { from: H + 20 * MINUTE, to: H + 60 * MINUTE + 5, limit: 10 }),
      )
      expectExact(
        await store.query(new URLSearchParams(`symbol=BTC&interval=${10 * MINUTE}&fromTimestamp=0&toTimestamp=${MAX}&offset=1&limit=3`)),
        model.range('BTC', { from: 0, to: MAX, interval: 10 * MINUTE, offset: 1, limit: 3 }),
      )
      expectExact(await store.query(new URLSearchParams('symbols=ETH,BTC,ETH&limit=5')), model.several(['ETH', 'BTC']))
      expectExact(await store.query(new URLSearchParams(`toTimestamp=${H}`)), model.several(undefined, { to: H }))
      expectExact(await store.query({}), model.several())
      expectExact(await store.query({ symbol: 'BTC', provider: TEST_PROVIDER.name }), model.latest('BTC'))
      expectExact(await store.query({ symbol: 'BTC', provider: TEST_PROVIDER.id }), model.latest('BTC'))
    })

    it('query refuses bad parameters with coded errors', async () => {
      const { store } = await seeded()
      await rejectsCode(store.query({ symbol: 'BTC', provider: 'chainlink' }), 'PRICE_UNSUPPORTED_PROVIDER')
      await rejectsCode(store.query(new URLSearchParams('symbol=BTC+USD')), 'PRICE_INVALID_SYMBOL')
      await rejectsCode(store.query(new URLSearchParams('symbol=BTC&symbol=ETH')), 'PRICE_INVALID_QUERY')
      await rejectsCode(store.query(new URLSearchParams('interval=5')), 'PRICE_INVALID_INTERVAL')
      await rejectsCode(store.query(new URLSearchParams('symbol=BTC&interval=5')), 'PRICE_INVALID_RANGE')
      await rejectsCode(store.query(new URLSearchParams('symbol=BTC&limit=3001')), 'PRICE_INVALID_QUERY')
    })

    it('typed methods refuse bad arguments with coded errors', async () => {
      const store = await openStore()
      await rejectsCode(store.latest('BTC', { limit: 0 }), 'PRICE_INVALID_QUERY')
      await rejectsCode(store.latest('', {}), 'PRICE_INVALID_SYMBOL')
      await rejectsCode(store.latest('BTC', { from: 5, to: 4 }), 'PRICE_INVALID_RANGE')
      await rejectsCode(store.several(['A,B']), 'PRICE_INVALID_SYMBOL')
      await rejectsCode(store.range('BTC', { from: 0, to: 1, interval: 0 }), 'PRICE_INVALID_INTERVAL')
      await rejectsCode(store.range('BTC', { from: 0, interval: 1 } as never), 'PRICE_INVALID_RANGE')
      await rejectsCode(store.range('BTC', { from: 0, to: 1, interval: 1.5 }), 'PRICE_INVALID_INTERVAL')
    })
  })
}
