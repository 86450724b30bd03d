/**
 * The one time syntax (src/rules/time-text.ts), by example: each form, the
 * edges of each, and the message a refused time gets.
 */
import { describe, expect, it } from 'vitest'
import { TIME_TEXT_FORMS, parseTimeText, readClockOnce, timeTextProblem } from '../../src/rules/time-text.js'

const NOW = Date.UTC(2024, 5, 1, 12, 0, 0) // 2024-06-01T12:00:00Z
const clock = (): number => NOW

describe('parseTimeText', () => {
  it.each([
    ['0', 0],
    ['1717200000000', 1717200000000],
    ['0001717200000000', 1717200000000],
    ['9007199254740991', Number.MAX_SAFE_INTEGER],
    ['2024-06-01', Date.UTC(2024, 5, 1)],
    ['2024-06-01T12:00:00Z', NOW],
    ['2024-06-01T12:00Z', NOW],
    ['2024-06-01T12:00', NOW],
    ['2024-06-01 12:00:00', NOW],
    ['2024-06-01t12:00:00z', NOW],
    ['2024-06-01T14:00:00+02:00', NOW],
    ['2024-06-01T07:30:00-04:30', NOW],
    ['2024-06-01T12:00:00-00:00', NOW],
    ['2024-06-01T12:00:00.5Z', NOW + 500],
    ['2024-06-01T12:00:00.123456789Z', NOW + 123],
    ['2024-06-01T12:00:00.9999Z', NOW + 999],
    ['2024-02-29', Date.UTC(2024, 1, 29)],
    ['2000-02-29', Date.UTC(2000, 1, 29)],
    ['1970-01-01T00:00:00Z', 0],
    ['1970-01-01T01:00:00+01:00', 0],
    ['now', NOW],
    ['now-1d', NOW - 86_400_000],
    ['now+15m', NOW + 900_000],
    ['-15m', NOW - 900_000],
    ['+2h', NOW + 7_200_000],
    ['now-500ms', NOW - 500],
    ['now-30s', NOW - 30_000],
    ['now-1w', NOW - 604_800_000],
    ['now-0d', NOW],
  ])('reads %s', (text, expected) => {
    expect(parseTimeText(text, clock)).toBe(expected)
  })

  it.each([
    '', ' ', ' now', 'now ', 'NOW', 'yesterday', '-5', '1e3', '0x10', '1.5', '-1',
    '9007199254740992', '99999999999999999999',
    '1969-12-31', '1969-12-31T23:59:59.999Z', '1970-01-01T00:30:00+01:00',
    '2024-6-1', '2024-06-01T', '2024-06-01T12', '2024-06-01T12:00:00.', '2024-06-01T12:00:00ZZ',
    '2024-06-01  12:00', '2024-06-01_12:00', '2024-06-01T12:00:00+0200', '2024-06-01T12:00:00+02',
    '2023-02-29', '1900-02-29', '2024-04-31', '2024-13-01', '2024-00-10', '2024-06-00',
    '2024-06-01T24:00', '2024-06-01T12:60', '2024-06-01T12:00:60Z', '2024-06-01T12:00+24:00', '2024-06-01T12:00+01:60',
    'now-1', 'now-1y', 'now-1M', 'now-1mo', 'now-d', 'now--1d', 'now-1d-1h', 'now 15m', '15m', 'now-1.5h', 'now-1D',
    'now-99999999999999999w',
  ])('refuses %j', (text) => {
    expect(parseTimeText(text, clock)).toBeUndefined()
  })

  it('refuses a relative time that leaves the range', () => {
    expect(parseTimeText('now-1w', () => 1000)).toBeUndefined()
    expect(parseTimeText('now+1ms', () => Number.MAX_SAFE_INTEGER)).toBeUndefined()
    expect(parseTimeText('now-1ms', () => 1)).toBe(0)
  })

  it('reads the clock only for the forms that need it', () => {
    let reads = 0
    const counting = (): number => ++reads
    parseTimeText('1717200000000', counting)
    parseTimeText('2024-06-01', counting)
    parseTimeText('bad', counting)
    expect(reads).toBe(0)
    parseTimeText('now-1s', counting)
    expect(reads).toBe(1)
  })
})

describe('readClockOnce', () => {
  it('gives the first reading every time', () => {
    let reads = 0
    const once = readClockOnce(() => NOW + reads++)
    expect([parseTimeText('now-1h', once), parseTimeText('now', once)]).toEqual([NOW - 3_600_000, NOW])
    expect(reads).toBe(1)
  })
})

describe('timeTextProblem', () => {
  it('names the parameter, the value and the forms', () => {
    expect(timeTextProblem('fromTimestamp', 'yesterday')).toBe(`fromTimestamp must be a time: ${TIME_TEXT_FORMS} (got "yesterday")`)
    expect(TIME_TEXT_FORMS).toMatch(/ISO 8601.*now-1d.*-15m.*ms, s, m, h, d, w/)
  })

  it('says how to write "+" in a URL when a plus became a space', () => {
    expect(timeTextProblem('to', 'now 15m')).toMatch(/%2B/)
    expect(timeTextProblem('to', 'now-15x')).not.toMatch(/%2B/)
  })
})
