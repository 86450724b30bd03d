/**
 * Open, close and the state between them, on the suite's backend: the status, the
 * provider and limits, every operation refused before open and after close, a
 * pending write landing before close, concurrent writes all landing.
 */
import { describe, expect, it } from 'vitest'
import { DEFAULT_LIMITS, PriceStore } from '../../../src/index.js'
import { T0, TEST_PROVIDER } from '../../../src/testing/records.js'
import { expectExact, rejectsCode, throwsCode } from '../../support/assertions.js'
import { rec } from '../../support/records.js'
import { type FeatureTests, useStores } from './context.js'
import { Model } from './model.js'

export const lifecycleTests: FeatureTests = (suite) => {
  const persistent = suite.persistent === true
  describe('lifecycle', () => {
    const { newDb, openStore, options, track } = useStores(suite)

    it('is closed until opened, open after open(), closed after close(); both are idempotent', async () => {
      const store = new PriceStore(newDb(), options())
      track(store)
      expect(store.status).toBe('closed')
      await store.open()
      expect(store.status).toBe('open')
      await store.open()
      expect(store.status).toBe('open')
      await store.close()
      expect(store.status).toBe('closed')
      await store.close()
      expect(store.status).toBe('closed')
    })

    it('exposes its provider and limits, with defaults filled in', async () => {
      const store = await openStore({ limits: { maxLimit: 10 } })
      expect(store.provider).toEqual(TEST_PROVIDER)
      expect(store.limits).toEqual({ ...DEFAULT_LIMITS, maxLimit: 10 })
    })

    const operations: [string, (s: PriceStore) => Promise<unknown>][] = [
      ['put', (s) => s.put(rec())],
      ['putMany', (s) => s.putMany([rec()])],
      ['latest', (s) => s.latest('BTC')],
      ['several', (s) => s.several()],
      ['range', (s) => s.range('BTC', { from: 0, to: 10, interval: 1 })],
      ['query', (s) => s.query(new URLSearchParams('symbol=BTC'))],
      ['symbols', (s) => s.symbols()],
    ]

    it.each(operations)('%s before open() → PRICE_NOT_OPEN', async (_op, run) => {
      const store = new PriceStore(newDb(), options())
      await rejectsCode(run(store), 'PRICE_NOT_OPEN')
    })

    it.each(operations)('%s after close() → PRICE_NOT_OPEN', async (_op, run) => {
      const store = await openStore()
      await store.put(rec())
      await store.close()
      await rejectsCode(run(store), 'PRICE_NOT_OPEN')
    })

    it('rangeStream before open and after close → PRICE_NOT_OPEN when called', async () => {
      const store = new PriceStore(newDb(), options())
      throwsCode(() => store.rangeStream('BTC', { from: 0, to: 1, interval: 1 }), 'PRICE_NOT_OPEN')
      await store.open()
      track(store)
      await store.close()
      throwsCode(() => store.rangeStream('BTC', { from: 0, to: 1, interval: 1 }), 'PRICE_NOT_OPEN')
    })

    it('a write issued after close() started → PRICE_NOT_OPEN', async () => {
      const store = await openStore()
      const closing = store.close()
      await rejectsCode(store.put(rec()), 'PRICE_NOT_OPEN')
      await closing
    })

    it('close() waits for a pending putMany, which lands', async () => {
      const db = newDb()
      const store = await openStore({}, db)
      const batch = Array.from({ length: 50 }, (_, i) => rec({ symbol: 'PEND', timestamp: T0 + i }))
      const writing = store.putMany(batch)
      const closing = store.close()
      const outcome = await writing.then((count) => ({ count }), (err: unknown) => ({ err }))
      await closing
      expect(store.status).toBe('closed')
      expect(outcome).toEqual({ count: 50 })
      const again = await openStore({}, persistent ? newDb() : db)
      expectExact(await again.latest('PEND', { limit: 100 }), new Model().add(batch).latest('PEND', { limit: 100 }))
    })

    it('concurrent putMany calls all land', async () => {
      const store = await openStore()
      const batches = Array.from({ length: 25 }, (_, b) =>
        Array.from({ length: 8 }, (_, i) => rec({ symbol: `C${(b + i) % 5}`, timestamp: T0 + b * 100 + i })))
      const counts = await Promise.all(batches.map((batch) => store.putMany(batch)))
      expect(counts).toEqual(batches.map(() => 8))
      const model = new Model().add(batches.flat())
      expect(await store.symbols()).toEqual(['C0', 'C1', 'C2', 'C3', 'C4'])
      for (const symbol of model.symbols()) {
        expectExact(await store.latest(symbol, { limit: 3000 }), model.latest(symbol, { limit: 3000 }))
      }
    })
  })
}
