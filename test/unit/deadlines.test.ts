import { performance } from 'node:perf_hooks'
import { describe, expect, it } from 'vitest'
import { Deadlines } from '../../src/adapters/http/admission/deadlines.js'

/** Resolves after `ms` of real time. */
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/** Ref'd timers in the process now: what keeps it alive. */
const refedTimers = (): number => process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length

describe('Deadlines: many time budgets on one timer', () => {
  it('expires a deadline once its time has passed, never before', async () => {
    const deadlines = new Deadlines()
    const at = performance.now() + 20
    const expiredAt = await new Promise<number>((resolve) => deadlines.add(at, () => resolve(performance.now())))
    expect(expiredAt).toBeGreaterThanOrEqual(at)
    expect(deadlines.size).toBe(0)
  })

  it('a cancelled deadline never expires; the others still do', async () => {
    const deadlines = new Deadlines()
    const expired: string[] = []
    const now = performance.now()
    const a = deadlines.add(now + 10, () => expired.push('a'))
    deadlines.add(now + 15, () => expired.push('b'))
    deadlines.cancel(a)
    deadlines.cancel(a) // twice: a no-op
    await sleep(40)
    expect(expired).toEqual(['b'])
  })

  it('an earlier deadline added after a later one expires first (the timer is re-armed)', async () => {
    const deadlines = new Deadlines()
    const expired: string[] = []
    const now = performance.now()
    deadlines.add(now + 200, () => expired.push('late'))
    deadlines.add(now + 10, () => expired.push('early'))
    await sleep(60)
    expect(expired).toEqual(['early'])
    expect(deadlines.size).toBe(1)
    await sleep(200)
    expect(expired).toEqual(['early', 'late'])
  })

  it('expires, in their turn, deadlines spread over time, those added from an expiry too', async () => {
    const deadlines = new Deadlines()
    const expired: number[] = []
    const start = performance.now()
    for (const offset of [30, 5, 20, 5, 12]) {
      deadlines.add(start + offset, () => {
        expired.push(offset)
        if (offset === 30) deadlines.add(performance.now() + 5, () => expired.push(35))
      })
    }
    await sleep(80)
    expect(expired).toEqual([5, 5, 12, 20, 30, 35])
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
