import { describe, expect, it } from 'vitest'
import { isoTime } from '../../../src/adapters/http/observe/access-log.js'

describe('isoTime', () => {
  it('is toISOString, whichever second was formatted before (the cache never leaks into another second)', () => {
    const base = Date.UTC(2024, 5, 1, 8, 0, 0)
    const times = [0, 1, 9, 10, 99, 100, 999, 1000, 1001, 59_999, 60_000, -1000, 86_400_000 - 1].map((offset) => base + offset)
    // Forwards, backwards and interleaved, so each call may or may not hit the cached second.
    for (const ms of [...times, ...times.reverse(), 0, 1, base, 1, 0, 253_402_300_799_999]) expect(isoTime(ms), String(ms)).toBe(new Date(ms).toISOString())
  })
})
