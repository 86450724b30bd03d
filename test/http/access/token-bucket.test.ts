import { describe, expect, it } from 'vitest'
import { TokenBucket } from '../../../src/adapters/http/access/token-bucket.js'

// Budgets on a clock the test sets: 10 tokens a 1,000 ms window, so one token every 100 ms.
describe('a read key\'s token bucket', () => {
  it('takes whole tokens for requests, and says how long until the next', () => {
    const bucket = new TokenBucket(10, 1_000, 0)
    for (let i = 0; i < 10; i++) expect(bucket.take(1, 0)).toBe(0)
    expect(bucket.take(1, 0)).toBe(100)
    expect(bucket.take(1, 99)).toBe(1)
    expect(bucket.take(1, 100)).toBe(0)
    // Refilled to its size, never past it.
    for (let i = 0; i < 10; i++) expect(bucket.take(1, 1_000_000)).toBe(0)
    expect(bucket.take(1, 1_000_000)).toBeGreaterThan(0)
  })

  it('lets a cost run while any token is left, into debt of at most a whole budget', () => {
    const bucket = new TokenBucket(10, 1_000, 0)
    expect(bucket.take(25, 0)).toBe(0) // 10 - 25 = -15, held at -10
    // Back above zero after the debt's 10 tokens: 1,000 ms, plus the least bit.
    expect(bucket.take(5, 999)).toBe(1)
    expect(bucket.take(5, 1_001)).toBe(0)
    // An unbounded cost costs the same at most.
    const unbounded = new TokenBucket(10, 1_000, 0)
    expect(unbounded.take(Number.POSITIVE_INFINITY, 0)).toBe(0)
    // From -10 to a whole token: 11 tokens, 1,100 ms.
    expect(unbounded.take(1, 0)).toBe(1_100)
  })
})
