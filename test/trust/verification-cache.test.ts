/**
 * VerificationCache: bounded, first in first out; what it computes is noted
 * once for the other workers (takeLearned), and what they computed is kept
 * without counting as this cache's work (remember).
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { VerificationCache } from '../../src/trust/verification-cache.js'

describe('VerificationCache', () => {
  it('counts hits and misses, and drops the oldest outcome past its capacity', () => {
    const cache = new VerificationCache(2)
    cache.set('a', true)
    cache.set('b', '0xab')
    cache.set('c', false)
    expect([cache.get('a'), cache.get('b'), cache.get('c')]).toEqual([undefined, '0xab', false])
    expect(cache.stats()).toEqual({ hits: 2, misses: 1, size: 2 })
  })

  it('hands what it computed to another cache once, which then answers from it', () => {
    const here = new VerificationCache(10)
    const there = new VerificationCache(10)
    here.set('a', true)
    here.set('e', '')
    const learned = here.takeLearned()
    expect(here.takeLearned()).toBe('')
    there.remember(learned)
    expect([there.get('a'), there.get('e'), there.get('x')]).toEqual([true, '', undefined])
    // Remembered outcomes are not learned again (they would bounce between workers).
    expect(there.takeLearned()).toBe('')
    expect(there.stats()).toEqual({ hits: 2, misses: 1, size: 2 })
  })

  it('keeps and passes on nothing with capacity 0, notes no more than its capacity, and remembers within it', () => {
    const none = new VerificationCache(0)
    none.set('a', true)
    none.remember(JSON.stringify([['b', true]]))
    expect(none.takeLearned()).toBe('')
    expect(none.stats().size).toBe(0)
    const untaken = new VerificationCache(2)
    for (const key of ['a', 'b', 'c', 'd']) untaken.set(key, true)
    expect(JSON.parse(untaken.takeLearned())).toEqual([['a', true], ['b', true]])
    const small = new VerificationCache(1)
    small.remember(JSON.stringify([['a', true], ['b', false]]))
    expect([small.get('a'), small.get('b')]).toEqual([undefined, false])
  })

  it('answers as a first-in first-out model does, for any keeping, remembering and asking, however long it runs full', () => {
    const op = fc.oneof(
      fc.record({ type: fc.constant('set' as const), key: fc.nat(12), outcome: fc.boolean() }),
      fc.record({ type: fc.constant('remember' as const), keys: fc.array(fc.nat(12), { maxLength: 4 }), outcome: fc.boolean() }),
      fc.record({ type: fc.constant('get' as const), key: fc.nat(12) }),
    )
    fc.assert(fc.property(fc.integer({ min: 1, max: 5 }), fc.array(op, { maxLength: 200 }), (capacity, ops) => {
      const cache = new VerificationCache(capacity)
      // The model: keys in the order first kept, the oldest dropped past the capacity; keeping a key again changes
      // its outcome, not its place.
      const order: string[] = []
      const outcomes = new Map<string, boolean>()
      const keep = (key: string, outcome: boolean): void => {
        if (!outcomes.has(key)) {
          order.push(key)
          if (order.length > capacity) outcomes.delete(order.shift() as string)
        }
        outcomes.set(key, outcome)
      }
      for (const step of ops) {
        if (step.type === 'set') {
          cache.set(`k${step.key}`, step.outcome)
          keep(`k${step.key}`, step.outcome)
        } else if (step.type === 'remember') {
          cache.remember(JSON.stringify(step.keys.map((key) => [`k${key}`, step.outcome])))
          for (const key of step.keys) keep(`k${key}`, step.outcome)
        } else {
          expect(cache.get(`k${step.key}`)).toBe(outcomes.get(`k${step.key}`))
        }
      }
      expect(cache.stats().size).toBe(outcomes.size)
    }))
  })
})
