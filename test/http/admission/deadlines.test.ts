import { performance } from 'node:perf_hooks'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { Deadlines } from '../../../src/adapters/http/admission/deadlines.js'

/** Ref'd timers in the process now: what keeps it alive. */
const refedTimers = (): number => process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length

describe('Deadlines: many time budgets on one timer', () => {
  // Fake timers with the fake Date as the clock: expiries happen when the test moves time, never
  // because the machine was slow, so the order and the "not yet" checks cannot depend on luck.
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] })
  })
  afterEach(() => {
    vi.useRealTimers()
  })
  const fakeClock = (): Deadlines => new Deadlines(() => Date.now())

  it('expires a deadline once its time has passed, never before', () => {
    const deadlines = fakeClock()
    const at = Date.now() + 20
    let expiredAt: number | undefined
    deadlines.add(at, () => (expiredAt = Date.now()))
    vi.advanceTimersByTime(19)
    expect(expiredAt).toBeUndefined()
    vi.advanceTimersByTime(1)
    expect(expiredAt).toBe(at)
    expect(deadlines.size).toBe(0)
  })

  it('re-arms when its timer fires before the clock reaches the deadline (setTimeout counts whole ms)', () => {
    let offset = 0
    const deadlines = new Deadlines(() => Date.now() + offset)
    const expired: string[] = []
    deadlines.add(Date.now() + 10, () => expired.push('a'))
    offset = -3 // the deadline clock lags the timers': the first firing is early
    vi.advanceTimersByTime(10)
    expect(expired).toEqual([])
    expect(deadlines.size).toBe(1)
    vi.advanceTimersByTime(3)
    expect(expired).toEqual(['a'])
  })

  it('a cancelled deadline never expires; the others still do', () => {
    const deadlines = fakeClock()
    const expired: string[] = []
    const now = Date.now()
    const a = deadlines.add(now + 10, () => expired.push('a'))
    deadlines.add(now + 15, () => expired.push('b'))
    deadlines.cancel(a)
    deadlines.cancel(a) // twice: a no-op
    vi.advanceTimersByTime(40)
    expect(expired).toEqual(['b'])
  })

  it('an earlier deadline added after a later one expires first (the timer is re-armed)', () => {
    const deadlines = fakeClock()
    const expired: string[] = []
    const now = Date.now()
    deadlines.add(now + 200, () => expired.push('late'))
    deadlines.add(now + 10, () => expired.push('early'))
    vi.advanceTimersByTime(60)
    expect(expired).toEqual(['early'])
    expect(deadlines.size).toBe(1)
    vi.advanceTimersByTime(140)
    expect(expired).toEqual(['early', 'late'])
  })

  it('expires, in their turn, deadlines spread over time, those added from an expiry too', () => {
    const deadlines = fakeClock()
    const expired: number[] = []
    const start = Date.now()
    for (const offset of [30, 5, 20, 5, 12]) {
      deadlines.add(start + offset, () => {
        expired.push(offset)
        if (offset === 30) deadlines.add(Date.now() + 5, () => expired.push(35))
      })
    }
    for (const [step, seen] of [[5, [5, 5]], [7, [5, 5, 12]], [8, [5, 5, 12, 20]], [10, [5, 5, 12, 20, 30]], [5, [5, 5, 12, 20, 30, 35]]] as const) {
      vi.advanceTimersByTime(step)
      expect(expired).toEqual(seen)
    }
  })

})

describe('Deadlines on real timers', () => {
  it('expires on the real clock by default', async () => {
    const deadlines = new Deadlines()
    const at = performance.now() + 5
    const expiredAt = await new Promise<number>((resolve) => deadlines.add(at, () => resolve(performance.now())))
    expect(expiredAt).toBeGreaterThanOrEqual(at)
  })

  it('refuses NaN, which could never expire', () => {
    expect(() => new Deadlines().add(Number.NaN, () => {})).toThrow(RangeError)
  })

  it('keeps the process alive only while a deadline is pending, as a timer per deadline would', async () => {
    const deadlines = new Deadlines()
    const before = refedTimers()
    const first = deadlines.add(performance.now() + 60_000, () => {})
    expect(refedTimers()).toBe(before + 1)
    deadlines.cancel(first)
    expect(refedTimers()).toBe(before)
    // Pending again, on the timer still armed for the first one.
    const second = deadlines.add(performance.now() + 60_001, () => {})
    expect(refedTimers()).toBe(before + 1)
    deadlines.cancel(second)
    expect(refedTimers()).toBe(before)
  })
})
