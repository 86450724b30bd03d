/**
 * Writing and reading back on the suite's backend: put and putMany, the returned
 * shape of a record, replacement of a key, ids sharing a millisecond, symbols
 * that are prefixes of others, symbols(), and putMany's atomicity.
 */
import { describe, expect, it } from 'vitest'
import { T0, TEST_PROVIDER } from '../../../src/testing/records.js'
import { compareUtf8 } from '../../../src/testing/reference-model.js'
import { expectExact, rejectsCode } from '../../support/assertions.js'
import { expected, rec, type Input } from '../../support/records.js'
import { type FeatureTests, useStores } from './context.js'
import { H, HOUR, MAX, Model, unchecked, type Written } from './model.js'

export const writingTests: FeatureTests = (suite) => {
  describe('writing and reading', () => {
    const { openStore, seeded } = useStores(suite)

    it('put then latest returns the record exactly: provider and public key joined, contract field order', async () => {
      const store = await openStore()
      const input = rec()
      await expect(store.put(input)).resolves.toBeUndefined()
      const [got] = await store.latest('BTC')
      expectExact(got, expected(input))
      expect(Object.keys(got ?? {})).toEqual([
        'id', 'symbol', 'provider', 'value', 'signature', 'permawebTx', 'version', 'source', 'timestamp', 'providerPublicKey',
      ])
    })

    it('putMany returns the count, accepts any iterable, and 0 for an empty batch', async () => {
      const store = await openStore()
      function* generate() {
        for (let i = 0; i < 5; i++) yield rec({ timestamp: T0 + i })
      }
      await expect(store.putMany(generate())).resolves.toBe(5)
      await expect(store.putMany([])).resolves.toBe(0)
      expect((await store.latest('BTC', { limit: 10 })).length).toBe(5)
    })

    it('keeps extra fields in order, value -0, a tricky source; drops input `minutes`; accepts an equal providerPublicKey', async () => {
      const store = await openStore()
      const source = JSON.parse('{"__proto__": {"x": 1}, "lone": "\\ud800", "n": [1.5, null, {"deep": true}]}') as Record<string, unknown>
      const input = rec({ value: -0, source, minutes: 99, evmSignature: '0xabc', zeta: { z: [1] }, providerPublicKey: TEST_PROVIDER.publicKey })
      await store.put(input)
      const [got] = await store.latest('BTC')
      expectExact(got, expected(input))
      expect(Object.is(got?.value, -0)).toBe(true)
      expect(Object.hasOwn(got?.source ?? {}, '__proto__')).toBe(true)
      expect(Object.keys(got ?? {})).toEqual([
        'id', 'symbol', 'provider', 'value', 'signature', 'permawebTx', 'version', 'source', 'timestamp',
        'evmSignature', 'zeta', 'providerPublicKey',
      ])
      const [sampled] = await store.range('BTC', { from: 0, to: MAX, interval: 1 })
      expectExact(sampled, expected(input, { minutes: true }))
      expect(sampled?.minutes).toBe(new Date(T0).getUTCMinutes())
    })

    // Each unusual part alone, so none hides behind another: validation tells the value codec which bodies are plain.
    it.each([
      ['-0 in source', { source: { a: -0, b: 1 } }],
      ['-0 in an extra', { zeta: [0, -0] }],
      ['a lone surrogate in signature', { signature: 'c2ln\ud800' }],
      ['a __proto__ key nested in source', { source: JSON.parse('{"a": {"__proto__": 2}}') as Record<string, unknown> }],
    ])('keeps %s exactly', async (_, fields) => {
      const store = await openStore()
      const input = rec(fields)
      await store.put(input)
      expectExact((await store.latest('BTC'))[0], expected(input))
    })

    it('the same (symbol, timestamp, id) replaces; within one batch the last one wins', async () => {
      const store = await openStore()
      await store.put(rec({ value: 1 }))
      const second = rec({ value: 2, note: 'second' })
      await store.put(second)
      expectExact(await store.latest('BTC', { limit: 10 }), [expected(second)])
      const third = rec({ value: 3 })
      const fourth = rec({ value: 4 })
      await store.putMany([third, fourth])
      expectExact(await store.latest('BTC', { limit: 10 }), [expected(fourth)])
    })

    it('different ids at the same timestamp are all kept, ordered by id UTF-8 bytes (not UTF-16)', async () => {
      const store = await openStore()
      const ids = ['a', 'B', '\u{10000}', '\uE000', 'b', '\uFFFF', 'ab']
      const records = ids.map((id) => rec({ id, timestamp: T0 }))
      await store.putMany([rec({ timestamp: T0 - 1 }), ...records, rec({ timestamp: T0 + 1 })])
      const newestFirst = [...ids].sort(compareUtf8).reverse()
      expect(newestFirst).toEqual(['\u{10000}', '\uFFFF', '\uE000', 'b', 'ab', 'a', 'B'])
      const got = await store.latest('BTC', { limit: 10, from: T0, to: T0 })
      expect(got.map((r) => r.id)).toEqual(newestFirst)
      expectExact(got, newestFirst.map((id) => expected(records[ids.indexOf(id)] as Input)))
      // The range form represents the millisecond by the greatest id; several picks it too.
      expect((await store.range('BTC', { from: T0, to: T0, interval: 1 })).map((r) => r.id)).toEqual(['\u{10000}'])
      expect((await store.several(['BTC'], { to: T0 })).BTC?.id).toBe('\u{10000}')
    })

    it('BTC and BTC-USD (and BT, BTC.) stay apart in every form', async () => {
      const store = await openStore()
      const all = [
        rec({ symbol: 'BTC', timestamp: T0 }),
        rec({ symbol: 'BTC-USD', timestamp: T0 + 1 }),
        rec({ symbol: 'BTC.', timestamp: T0 + 2 }),
        rec({ symbol: 'BT', timestamp: T0 + 3 }),
        rec({ symbol: 'BTCB', timestamp: T0 - 1 }),
      ]
      await store.putMany(all)
      const model = new Model().add(all)
      for (const symbol of ['BTC', 'BTC-USD', 'BT']) {
        expectExact(await store.latest(symbol, { limit: 10 }), model.latest(symbol, { limit: 10 }))
        expectExact(await store.range(symbol, { from: 0, to: MAX, interval: 1 }), model.range(symbol, { from: 0, to: MAX, interval: 1 }))
        expectExact(await store.query({ symbol, limit: '10' }), model.latest(symbol, { limit: 10 }))
      }
      expectExact(await store.several(['BTC']), model.several(['BTC']))
      expect(await store.symbols()).toEqual(['BT', 'BTC', 'BTC-USD', 'BTC.', 'BTCB'])
    })

    it('symbols() lists every symbol with data, in UTF-8 byte order', async () => {
      const { store, model } = await seeded()
      expect(await store.symbols()).toEqual(model.symbols())
      const more = ['B', 'z', '\uFFFF', '\u{10000}', '\u00e9']
      await store.putMany(more.map((symbol) => rec({ symbol })))
      const expectedSymbols = [...model.symbols(), ...more].sort(compareUtf8)
      expect(await store.symbols()).toEqual(expectedSymbols)
      expect(expectedSymbols.indexOf('\uFFFF')).toBeLessThan(expectedSymbols.indexOf('\u{10000}'))
    })
  })

  describe('putMany is atomic', () => {
    const { openStore, seeded } = useStores(suite)

    it.each([0, 2, 4])('a bad record at position %d → PRICE_INVALID_RECORD index %d; nothing of the batch is visible', async (k) => {
      const { store, model } = await seeded()
      const before = { symbols: await store.symbols(), several: await store.several(), btc: await store.latest('BTC', { limit: 100 }) }
      const batch: Written[] = Array.from({ length: 5 }, (_, i) => rec({ symbol: `NEW${i}`, timestamp: H + 10 * HOUR + i }))
      batch.push(rec({ symbol: 'BTC', timestamp: H + 10 * HOUR })) // would become BTC's latest
      batch[k] = rec({ symbol: `NEW${k}`, value: 'not a number' })
      const err = await rejectsCode(store.putMany(batch), 'PRICE_INVALID_RECORD')
      expect(err.details).toEqual({ index: k, field: 'value' })
      expect(err.message).toContain(`record ${k}`)
      expect(await store.symbols()).toEqual(before.symbols)
      expect(await store.symbols()).toEqual(model.symbols())
      expectExact(await store.several(), before.several)
      expectExact(await store.latest('BTC', { limit: 100 }), before.btc)
      for (let i = 0; i < 5; i++) expect(await store.latest(`NEW${i}`)).toEqual([])
      expect(await store.query({ symbols: 'NEW0,NEW1,NEW3' })).toEqual({})
    })

    it('a non-object at position k → index k with no field; a bad record after 999 good ones → nothing written', async () => {
      const store = await openStore()
      const small = [rec({ symbol: 'X1' }), null, rec({ symbol: 'X2' })]
      const err = await rejectsCode(store.putMany(unchecked(small)), 'PRICE_INVALID_RECORD')
      expect(err.details.index).toBe(1)
      expect(err.details.field).toBeUndefined()
      const big: unknown[] = Array.from({ length: 999 }, (_, i) => rec({ symbol: `S${i % 7}`, timestamp: T0 + i }))
      big.push(rec({ symbol: 'S0', timestamp: -1 }))
      const err2 = await rejectsCode(store.putMany(unchecked(big)), 'PRICE_INVALID_RECORD')
      expect(err2.details).toEqual({ index: 999, field: 'timestamp' })
      expect(await store.symbols()).toEqual([])
      expect(await store.several()).toEqual({})
    })

    it('put of a bad record writes nothing and names index 0', async () => {
      const store = await openStore()
      const err = await rejectsCode(store.put(rec({ symbol: 'BTC USD' })), 'PRICE_INVALID_RECORD')
      expect(err.details).toEqual({ index: 0, field: 'symbol' })
      expect(await store.symbols()).toEqual([])
    })
  })
}
