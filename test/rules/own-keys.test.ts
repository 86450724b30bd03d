import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { setOwn } from '../../src/rules/own-keys.js'

describe('setOwn', () => {
  it('builds the object Object.fromEntries builds, prototype keys included, the prototype untouched (property)', () => {
    const keyArb = fc.oneof(fc.string(), fc.constantFrom(...Object.getOwnPropertyNames(Object.prototype), '42', '0'))
    fc.assert(
      fc.property(fc.array(fc.tuple(keyArb, fc.integer())), (entries) => {
        const built: Record<string, number> = {}
        for (const [key, value] of entries) setOwn(built, key, value)
        const expected = Object.fromEntries(entries)
        expect(Object.getPrototypeOf(built)).toBe(Object.prototype)
        expect(Reflect.ownKeys(built)).toEqual(Reflect.ownKeys(expected))
        for (const key of Reflect.ownKeys(expected)) {
          expect(Object.getOwnPropertyDescriptor(built, key)).toEqual(Object.getOwnPropertyDescriptor(expected, key))
        }
      }),
      { numRuns: 500 },
    )
  })
})
