/**
 * The one time syntax (src/rules/time-text.ts), property-tested against
 * computations of its own: `Date`'s ISO writer for round trips, BigInt
 * arithmetic and a unit table written out here for relative times, `Date`'s
 * day rollover for dates that do not exist. Fixed seeds: a failure repeats.
 */
import fc from 'fast-check'
import { describe, it } from 'vitest'
import { parseTimeText } from '../../src/rules/time-text.js'

const MAX = Number.MAX_SAFE_INTEGER
/** The last millisecond of year 9999: ISO's four-digit years end there. */
const LAST_ISO = Date.UTC(9999, 11, 31, 23, 59, 59, 999)
const RUNS = { seed: 23, numRuns: 2000 }

const UNITS: Record<string, bigint> = { ms: 1n, s: 1000n, m: 60n * 1000n, h: 3600n * 1000n, d: 24n * 3600n * 1000n, w: 7n * 24n * 3600n * 1000n }

const timeArb = fc.integer({ min: 0, max: LAST_ISO })
const pad = (n: number, width = 2): string => String(n).padStart(width, '0')

describe('parseTimeText, properties', () => {
  it('reads the ms digits of any time in range, and refuses those past 2^53 - 1', () => {
    fc.assert(fc.property(fc.integer({ min: 0, max: MAX }), (t) => parseTimeText(String(t)) === t), RUNS)
    fc.assert(fc.property(fc.bigInt({ min: BigInt(MAX) + 1n, max: 10n ** 30n }), (big) => parseTimeText(big.toString()) === undefined), RUNS)
  })

  it('round-trips the ISO string of t, in every spelling RFC 3339 allows', () => {
    const spelling = fc.record({ separator: fc.constantFrom('T', 't', ' '), zone: fc.constantFrom('Z', 'z', '+00:00', '-00:00'), extra: fc.stringMatching(/^[0-9]{0,6}$/) })
    fc.assert(
      fc.property(timeArb, spelling, (t, { separator, zone, extra }) => {
        const iso = new Date(t).toISOString() // YYYY-MM-DDTHH:MM:SS.mmmZ
        const text = `${iso.slice(0, 10)}${separator}${iso.slice(11, 23)}${extra}${zone}`
        return parseTimeText(text) === t
      }),
      RUNS,
    )
  })

  it('reads a wall-clock time with an offset as the instant it names', () => {
    const offsetArb = fc.integer({ min: -(23 * 60 + 59), max: 23 * 60 + 59 })
    fc.assert(
      fc.property(timeArb, offsetArb, (t, offsetMinutes) => {
        const wall = t + offsetMinutes * 60_000 // the same instant's clock reading at that offset
        fc.pre(wall >= 0 && wall <= LAST_ISO)
        const sign = offsetMinutes < 0 ? '-' : '+'
        const abs = Math.abs(offsetMinutes)
        const text = `${new Date(wall).toISOString().slice(0, 23)}${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`
        return parseTimeText(text) === t
      }),
      RUNS,
    )
  })

  it('reads a date alone, and a date-time without seconds, as UTC', () => {
    fc.assert(
      fc.property(timeArb, (t) => {
        const iso = new Date(t).toISOString()
        const day = Math.floor(t / 86_400_000) * 86_400_000
        const minute = Math.floor(t / 60_000) * 60_000
        return parseTimeText(iso.slice(0, 10)) === day && parseTimeText(iso.slice(0, 16)) === minute
      }),
      RUNS,
    )
  })

  it('takes a calendar date exactly when the day exists', () => {
    const dateArb = fc.record({ year: fc.integer({ min: 1970, max: 9999 }), month: fc.integer({ min: 0, max: 14 }), day: fc.integer({ min: 0, max: 33 }) })
    fc.assert(
      fc.property(dateArb, ({ year, month, day }) => {
        const text = `${pad(year, 4)}-${pad(month)}-${pad(day)}`
        // Date.UTC rolls a day that does not exist over into the next month: it exists when nothing rolled.
        const utc = Date.UTC(year, month - 1, day)
        const exists = month >= 1 && month <= 12 && day >= 1 && new Date(utc).getUTCMonth() === month - 1 && new Date(utc).getUTCDate() === day
        return parseTimeText(text) === (exists ? utc : undefined)
      }),
      RUNS,
    )
  })

  it('reads now±N·unit as now ± N times the unit, and refuses it out of range', () => {
    const relativeArb = fc.record({
      now: fc.integer({ min: 0, max: MAX }),
      amount: fc.oneof(fc.integer({ min: 0, max: 1000 }), fc.integer({ min: 0, max: MAX }).map(String).map(Number)),
      unit: fc.constantFrom(...Object.keys(UNITS)),
      sign: fc.constantFrom('+', '-'),
      prefix: fc.constantFrom('now', ''),
    })
    fc.assert(
      fc.property(relativeArb, ({ now, amount, unit, sign, prefix }) => {
        const span = BigInt(amount) * (UNITS[unit] as bigint)
        const exact = sign === '-' ? BigInt(now) - span : BigInt(now) + span
        const expected = exact >= 0n && exact <= BigInt(MAX) ? Number(exact) : undefined
        return parseTimeText(`${prefix}${sign}${amount}${unit}`, () => now) === expected
      }),
      RUNS,
    )
  })

  it('refuses text with any character outside the syntax, and any form with white space around it', () => {
    const foreign = fc.string({ minLength: 1, maxLength: 30 }).filter((text) => /[^0-9nowTtZz+\-:. msdhw]/.test(text))
    fc.assert(fc.property(foreign, (text) => parseTimeText(text, () => 0) === undefined), RUNS)
    const valid = fc.oneof(timeArb.map(String), timeArb.map((t) => new Date(t).toISOString()), fc.constant('now'), fc.constant('now-1d'))
    fc.assert(fc.property(valid, fc.constantFrom(' ', '\t', '\n'), fc.boolean(), (text, space, before) => parseTimeText(before ? `${space}${text}` : `${text}${space}`, () => 86_400_000) === undefined), RUNS)
  })

  it('refuses every time before 1970', () => {
    fc.assert(
      fc.property(fc.integer({ min: Date.UTC(1000, 0, 1), max: -1 }), (t) => parseTimeText(new Date(t).toISOString()) === undefined),
      RUNS,
    )
  })
})
