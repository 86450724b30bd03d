/**
 * Every time parameter of the service's own endpoints reads the one time
 * syntax (src/rules/time-text.ts), with a clock read once per request, and a
 * refused time is a coded 400 naming the parameter, the value and the forms.
 * `/prices` keeps RedStone's integer milliseconds.
 */
import { describe, expect, it } from 'vitest'
import { exportSelectionOf } from '../../src/adapters/http/live/export-endpoint.js'
import { verifyOptionsOf } from '../../src/adapters/http/live/verify-endpoint.js'
import { qualityOptionsOf } from '../../src/engine/quality/quality-query.js'
import { parseQuery } from '../../src/engine/parse-query.js'
import { TIME_TEXT_FORMS } from '../../src/rules/time-text.js'
import { DEFAULT_LIMITS } from '../../src/types.js'

const NOW = Date.UTC(2024, 5, 1, 12)
const HOUR = 3_600_000

/** A clock that moves on every reading: a second reading within one request would show. */
function movingClock(): () => number {
  let reads = 0
  return () => NOW + reads++ * 1000
}

function refusal(run: () => unknown): { code: string; message: string; parameter: unknown } {
  try {
    run()
  } catch (err) {
    const { code, message, details } = err as { code: string; message: string; details: { parameter?: unknown } }
    return { code, message, parameter: details.parameter }
  }
  throw new Error('expected a refusal')
}

describe('one time syntax on the endpoints', () => {
  it('/prices/export: from and to take ISO, now and relative times, from one reading of the clock', () => {
    const params = new URLSearchParams('symbol=BTC&from=now-1h&to=now')
    expect(exportSelectionOf(params, movingClock())).toEqual({ symbols: ['BTC'], from: NOW - HOUR, to: NOW })
    expect(exportSelectionOf(new URLSearchParams('from=-15m&to=2024-06-01T14:00:00%2B02:00'), () => NOW)).toEqual({ from: NOW - 900_000, to: NOW })
    const bad = refusal(() => exportSelectionOf(new URLSearchParams('from=now%2B1y')))
    expect(bad).toEqual({ code: 'PRICE_INVALID_RANGE', parameter: 'from', message: `from must be a time: ${TIME_TEXT_FORMS} (got "now+1y")` })
    expect(refusal(() => exportSelectionOf(new URLSearchParams('to=now+15m'))).message).toMatch(/got "now 15m".*%2B/)
  })

  it('/prices/verify: fromTimestamp and toTimestamp', () => {
    expect(verifyOptionsOf(new URLSearchParams('fromTimestamp=now-1d&toTimestamp=now-0s'), movingClock())).toEqual({ from: NOW - 24 * HOUR, to: NOW })
    const bad = refusal(() => verifyOptionsOf(new URLSearchParams('toTimestamp=tomorrow')))
    expect(bad).toMatchObject({ code: 'PRICE_INVALID_RANGE', parameter: 'toTimestamp' })
    expect(bad.message).toContain(TIME_TEXT_FORMS)
  })

  it('/prices/quality: fromTimestamp, toTimestamp and now', () => {
    const options = qualityOptionsOf(new URLSearchParams('fromTimestamp=now-2h&toTimestamp=2024-06-01T12:00Z&now=now-1h'), movingClock())
    expect(options).toEqual({ from: NOW - 2 * HOUR, to: NOW, now: NOW - HOUR })
    expect(qualityOptionsOf(new URLSearchParams('fromTimestamp=0&toTimestamp=1000'))).toEqual({ from: 0, to: 1000 })
    const bad = refusal(() => qualityOptionsOf(new URLSearchParams('fromTimestamp=0&toTimestamp=1000&now=later')))
    expect(bad).toMatchObject({ code: 'PRICE_INVALID_QUERY', parameter: 'now' })
    expect(bad.message).toBe(`now must be a time: ${TIME_TEXT_FORMS} (got "later")`)
    expect(refusal(() => qualityOptionsOf(new URLSearchParams('fromTimestamp=-1&toTimestamp=1000')))).toMatchObject({ code: 'PRICE_INVALID_RANGE', parameter: 'fromTimestamp' })
    // interval, origin and gapThreshold are spans, not times: milliseconds only.
    expect(refusal(() => qualityOptionsOf(new URLSearchParams('fromTimestamp=0&toTimestamp=1000&interval=1h')))).toMatchObject({ code: 'PRICE_INVALID_INTERVAL' })
  })

  it('/prices keeps RedStone\'s integer milliseconds, and says where time text is taken', () => {
    const options = { provider: { id: 'redstone', name: 'RedStone' } as never, limits: DEFAULT_LIMITS }
    for (const text of ['now', 'now-1h', '-15m', '2024-06-01', '2024-06-01T12:00:00Z']) {
      for (const query of [`fromTimestamp=${encodeURIComponent(text)}&toTimestamp=1717200000000`, `fromTimestamp=1717100000000&toTimestamp=${encodeURIComponent(text)}`]) {
        const bad = refusal(() => parseQuery(new URLSearchParams(`symbol=BTC&${query}&interval=3600000`), options))
        expect(bad).toMatchObject({ code: 'PRICE_INVALID_RANGE' })
        expect(bad.message).toContain(`(got ${JSON.stringify(text)}): /prices takes milliseconds since 1970, as RedStone's API does; time text such as ${JSON.stringify(text)} is taken by /prices/export`)
      }
    }
    // Not time text: no hint.
    const plain = refusal(() => parseQuery(new URLSearchParams('symbol=BTC&fromTimestamp=soon&toTimestamp=1717200000000&interval=3600000'), options))
    expect(plain.message).toBe('fromTimestamp must be a plain decimal integer (got "soon")')
  })
})
