/**
 * A point in time written as text, as the CLI's `--from`/`--to` and
 * `GET /prices/export`'s `from`/`to` take it: milliseconds since the epoch
 * (digits only), an ISO 8601 date (`2024-06-01`, `2024-06-01T12:00:00Z`) or
 * `now`. `undefined` when the text is none of those, or a time before 1970.
 */
export function parseTimeText(text: string, now: () => number = Date.now): number | undefined {
  if (text === 'now') return now()
  const value = /^[0-9]+$/.test(text) ? Number(text) : Date.parse(text)
  return Number.isSafeInteger(value) && value >= 0 ? value : undefined
}

/** What {@link parseTimeText} takes, for messages. */
export const TIME_TEXT_FORMS = 'milliseconds since 1970, an ISO date, or "now"'
