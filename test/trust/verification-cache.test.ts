/**
 * VerificationCache: bounded, first in first out; what it computes is noted
 * once for the other workers (takeLearned), and what they computed is kept
 * without counting as this cache's work (remember).
 */
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
})
