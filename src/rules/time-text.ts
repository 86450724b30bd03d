/**
 * The one time syntax of the CLI and of the service's own endpoints:
 * every time flag of the CLI (`--from`, `--to`, `--before`, `--now`, `--end`),
 * `GET /prices/export`'s `from`/`to`, and the `fromTimestamp`/`toTimestamp`/`now`
 * of `GET /prices/quality` and `GET /prices/verify` read their text here.
 * `GET /prices` keeps RedStone's integer milliseconds (docs/semantics.md, "Times").
 *
 * Forms (docs/semantics.md, "Times"):
 * - milliseconds since 1970: digits only (`1717200000000`);
 * - an ISO 8601 / RFC 3339 date (`2024-06-01`: midnight UTC) or date-time
 *   (`2024-06-01T12:00:00Z`, `2024-06-01 12:00`, `2024-06-01t12:00:00.5+02:00`):
 *   `T`, `t` or one space between date and time; seconds and a fraction
 *   optional (a fraction finer than 1 ms is cut to the millisecond before);
 *   zone `Z`, `z` or `±HH:MM` (`-00:00` is UTC), UTC when none is given;
 * - `now`, the clock's reading;
 * - a time relative to now: `now-1d`, `now+15m`, and `-15m`, `+2h` meaning
 *   the same with `now` left out; units `ms`, `s`, `m` (minutes), `h`, `d`
 *   (24 h), `w` (7 d). No months or years: their length depends on the date.
 *
 * Any time before 1970 or after 2^53 − 1 ms is refused, as is anything else
 * (white space around, a date that does not exist such as `2024-02-30`,
 * second 60, hour 24).
 */

/** The milliseconds in each unit a relative time takes. */
export const TIME_UNITS_MS: Readonly<Record<string, number>> = Object.freeze({
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
})

const DIGITS = /^[0-9]+$/
const RELATIVE = /^(?:now)?([+-])([0-9]+)(ms|s|m|h|d|w)$/
// Groups: year, month, day, then optionally hour, minute, second, fraction, zone.
const ISO = /^([0-9]{4})-([0-9]{2})-([0-9]{2})(?:[Tt ]([0-9]{2}):([0-9]{2})(?::([0-9]{2})(?:\.([0-9]+))?)?([Zz]|[+-][0-9]{2}:[0-9]{2})?)?$/

/**
 * A point in time written as text, in the forms above: milliseconds since
 * 1970, an ISO 8601 / RFC 3339 date or date-time, `now`, or a time relative
 * to now (`now-1d`, `-15m`). `now` is read once, and only when the text needs it.
 * @returns the time in milliseconds since 1970, or `undefined` when the text is
 *   none of the forms, or its time is before 1970 or past 2^53 − 1
 */
export function parseTimeText(text: string, now: () => number = Date.now): number | undefined {
  if (typeof text !== 'string') return undefined
  let value: number
  if (DIGITS.test(text)) value = Number(text)
  else if (text === 'now') value = now()
  else {
    const relative = RELATIVE.exec(text)
    if (relative !== null) {
      const [, sign, amount, unit] = relative as unknown as [string, string, string, string]
      const span = Number(amount) * (TIME_UNITS_MS[unit] as number)
      // Past 2^53 the span is not exact, and no time it leads to can be in range.
      if (!Number.isSafeInteger(span)) return undefined
      value = sign === '-' ? now() - span : now() + span
    } else value = isoTime(text)
  }
  return Number.isSafeInteger(value) && value >= 0 ? value : undefined
}

/** Milliseconds of an ISO 8601 / RFC 3339 date or date-time, `NaN` when it is not one or names a day or time that does not exist. */
function isoTime(text: string): number {
  const match = ISO.exec(text)
  if (match === null) return Number.NaN
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map((part) => (part === undefined ? 0 : Number(part))) as [number, number, number, number, number, number]
  const fraction = match[7]
  const zone = match[8]
  if (month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return Number.NaN
  if (hour > 23 || minute > 59 || second > 59) return Number.NaN
  // Cut, not rounded: a time never moves to the next millisecond (nor, at .9995, the next second).
  const milliseconds = fraction === undefined ? 0 : Number(fraction.slice(0, 3).padEnd(3, '0'))
  let offset = 0
  if (zone !== undefined && zone !== 'Z' && zone !== 'z') {
    const zoneHours = Number(zone.slice(1, 3))
    const zoneMinutes = Number(zone.slice(4, 6))
    if (zoneHours > 23 || zoneMinutes > 59) return Number.NaN
    offset = (zone.startsWith('-') ? -1 : 1) * (zoneHours * 60 + zoneMinutes) * 60_000
  }
  // Years are four digits, 1970 and on once the offset is applied: Date.UTC's reading of years 0-99 as 19xx never applies to an accepted time.
  return Date.UTC(year, month - 1, day, hour, minute, second, milliseconds) - offset
}

/** Days in `month` (1-12) of the proleptic Gregorian `year`. */
function daysIn(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31
}

/** What {@link parseTimeText} takes, for messages. */
export const TIME_TEXT_FORMS =
  'milliseconds since 1970, an ISO 8601 / RFC 3339 date or date-time (2024-06-01, 2024-06-01T12:00:00Z, 2024-06-01T14:00:00.5+02:00; UTC unless it names an offset), ' +
  '"now", or a time relative to now (now-1d, now+15m, -15m; units ms, s, m, h, d, w)'

/**
 * The message for a time parameter whose text {@link parseTimeText} refused:
 * the parameter, the value and the forms taken. `now 15m` gets a hint, since a
 * URL query string reads `+` as a space.
 * @param name as the user wrote it: `--from` for a flag, `fromTimestamp` for a parameter
 */
export function timeTextProblem(name: string, text: unknown): string {
  const got = typeof text === 'string' ? JSON.stringify(text) : String(text)
  const plus = typeof text === 'string' && /^(?:now)? [0-9]+(?:ms|s|m|h|d|w)$/.test(text) ? ' (in a URL, write "+" as %2B: a "+" in a query string reads as a space)' : ''
  return `${name} must be a time: ${TIME_TEXT_FORMS} (got ${got})${plus}`
}

/**
 * A clock read at most once, on first use: the relative times of one request or
 * one command (`from=now-1h&to=now`) are measured from the same instant.
 */
export function readClockOnce(clock: () => number): () => number {
  let reading: number | undefined
  return () => (reading ??= clock())
}
