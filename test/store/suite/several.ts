/**
 * The several-tokens form on the suite's backend: the latest of each symbol, every
 * symbol in UTF-8 byte order or the named ones in request order, the window, and
 * symbols named like Object.prototype members.
 */
import { describe, expect, it } from 'vitest'
import { difference, expectExact } from '../../support/assertions.js'
import { expected, rec } from '../../support/records.js'
import { type FeatureTests, useStores } from './context.js'
import { H, HOUR, MINUTE, Model } from './model.js'

export const severalTests: FeatureTests = (suite) => {
  describe('several', () => {
    const { openStore, seeded } = useStores(suite)

    it('several: latest of each; all symbols in UTF-8 byte order; named ones in request order, once', async () => {
      const { store, model } = await seeded()
      const all = await store.several()
      expectExact(all, model.several())
      expect(Object.keys(all)).toEqual(model.symbols())
      expect(Object.keys(all)).toEqual(['BTC', 'BTC-USD', 'ETH', 'a', '\uE000x', '\u{1F600}'])
      const named = await store.several(['ETH', '\u{1F600}', 'BTC', 'ETH', 'NOPE'])
      expectExact(named, model.several(['ETH', '\u{1F600}', 'BTC', 'NOPE']))
      expect(Object.keys(named)).toEqual(['ETH', '\u{1F600}', 'BTC'])
      expect(await store.several([])).toEqual({})
    })

    it('several: the window; a symbol with no record in it is left out', async () => {
      const { store, model } = await seeded()
      for (const o of [{ to: H }, { to: H + 30 * MINUTE }, { from: H + 2 * HOUR }, { from: H + 40 * MINUTE, to: H + 41 * MINUTE }, { to: 0 }]) {
        expect(difference(await store.several(undefined, o), model.several(undefined, o)), JSON.stringify(o)).toBeUndefined()
        expect(difference(await store.several(['ETH', 'BTC'], o), model.several(['ETH', 'BTC'], o)), JSON.stringify(o)).toBeUndefined()
      }
      // ETH has nothing before H + 5.
      expect(Object.keys(await store.several(['ETH', 'BTC'], { to: H }))).toEqual(['BTC'])
    })

    it('several with "__proto__" and "constructor" symbols returns own properties', async () => {
      const store = await openStore()
      const proto = rec({ symbol: '__proto__', value: 1 })
      const ctor = rec({ symbol: 'constructor', value: 2 })
      const has = rec({ symbol: 'hasOwnProperty', value: 3 })
      await store.putMany([proto, ctor, has])
      const named = await store.several(['__proto__', 'constructor', 'toString'])
      expect(Object.getPrototypeOf(named)).toBe(Object.prototype)
      expect(Object.keys(named)).toEqual(['__proto__', 'constructor'])
      expect(Object.hasOwn(named, '__proto__')).toBe(true)
      expect(Object.hasOwn(named, 'toString')).toBe(false)
      expectExact(Object.getOwnPropertyDescriptor(named, '__proto__')?.value, expected(proto))
      expectExact(Object.getOwnPropertyDescriptor(named, 'constructor')?.value, expected(ctor))
      const all = await store.several()
      expect(Object.getPrototypeOf(all)).toBe(Object.prototype)
      expect(Object.keys(all)).toEqual(['__proto__', 'constructor', 'hasOwnProperty'])
      expectExact(all, new Model().add([proto, ctor, has]).several())
      const viaQuery = await store.query({ symbols: '__proto__,constructor' })
      expect(Object.keys(viaQuery)).toEqual(['__proto__', 'constructor'])
      expect(Object.getPrototypeOf(viaQuery)).toBe(Object.prototype)
      expectExact(await store.latest('__proto__'), [expected(proto)])
    })
  })
}
