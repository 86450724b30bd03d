/** An ISO 8601 date, with a time of day and a zone or not (`Date.parse` reads a date alone as UTC). */
const ISO_DATE = /^[0-9]{4}-[0-9]{2}-[0-9]{2}(T[0-9]{2}:[0-9]{2}(:[0-9]{2}(\.[0-9]{1,9})?)?(Z|[+-][0-9]{2}:[0-9]{2})?)?$/

/**
 * A point in time written as text, as the CLI's `--from`/`--to` and
 * `GET /prices/export`'s `from`/`to` take it: milliseconds since the epoch
 * (digits only), an ISO 8601 date (`2024-06-01`, `2024-06-01T12:00:00Z`) or
 * `now`. `undefined` when the text is none of those, or a time before 1970.
 */
export function parseTimeText(text: string, now: () => number = Date.now): number | undefined {
  if (text === 'now') return now()
  // Date.parse alone also reads loose text ("-5" is a day of May 2001): only the ISO forms go to it.
  const value = /^[0-9]+$/.test(text) ? Number(text) : ISO_DATE.test(text) ? Date.parse(text) : Number.NaN
  return Number.isSafeInteger(value) && value >= 0 ? value : undefined
}

/** What {@link parseTimeText} takes, for messages. */
export const TIME_TEXT_FORMS = 'milliseconds since 1970, an ISO date, or "now"'
