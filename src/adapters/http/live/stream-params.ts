import { describeValue } from '../../../errors.js'
import { parseFieldSelection } from '../../../rules/fields.js'
import { parsePortablePosition } from '../../../rules/portable-position.js'
import { fail } from '../../../rules/query-errors.js'
import type { FieldSelection } from '../../../types.js'

/** The header an `EventSource` sends when it reconnects: the id of the last event it received. */
export const LAST_EVENT_ID = 'last-event-id'

/** What a stream request asks to watch, for `store.watch()` to check (its own errors answer a bad value). */
export interface StreamParams {
  /** The symbols of `symbols` (split at commas) or `symbol`; all when absent. */
  readonly symbols?: readonly string[]
  /**
   * Where to start: `Last-Event-ID`, else `after`; absent for the live tail
   * from now. A portable position (`P.tag`) and any value that is not digits
   * stay text: `watch()` checks the one and refuses the other.
   */
  readonly after?: number | string
  /** The record fields each event's records keep (as `/prices`'s `fields`); absent for whole records. */
  readonly fields?: FieldSelection
}

/**
 * Reads the parameters of `GET /prices/stream`. `Last-Event-ID` takes
 * precedence over `after`: an `EventSource` reconnects to the URL it was
 * given (with its `after`) and sends the id of the last event it received,
 * which is further on. An empty `Last-Event-ID` counts as absent, as it
 * does for `EventSource` (it then sends none). Unknown parameters are
 * ignored, as on `/prices`.
 * @throws PriceStoreError `PRICE_INVALID_QUERY` for a parameter given twice, `symbol` with `symbols`, a malformed `fields`, or a malformed (or repeated) `Last-Event-ID`
 */
export function readStreamParams(params: URLSearchParams, lastEventId: string | string[] | undefined): StreamParams {
  const symbol = single(params, 'symbol')
  const symbols = single(params, 'symbols')
  const after = single(params, 'after')
  const fields = single(params, 'fields')
  const selection = fields === undefined ? undefined : parseFieldSelection('fields', fields)
  if (symbol !== undefined && symbols !== undefined) {
    throw fail('PRICE_INVALID_QUERY', 'symbols', `give symbol or symbols, not both (got symbol=${describeValue(symbol)} and symbols=${describeValue(symbols)})`)
  }
  const list = symbols?.split(',') ?? (symbol === undefined ? undefined : [symbol])
  const resume = resumePosition(lastEventId)
  const start = resume ?? (after === undefined ? undefined : position(after))
  return { ...(list === undefined ? {} : { symbols: list }), ...(start === undefined ? {} : { after: start }), ...(selection === undefined ? {} : { fields: selection }) }
}

function single(params: URLSearchParams, name: string): string | undefined {
  const values = params.getAll(name)
  if (values.length > 1) throw fail('PRICE_INVALID_QUERY', name, `parameter ${name} must be given at most once (got ${values.map(describeValue).join(', ')})`)
  return values[0]
}

/** Digits as a number (which `watch()` still checks is safe); anything else as the text, for `watch()` to name in its error. */
function position(text: string): number | string {
  return /^[0-9]+$/.test(text) ? Number(text) : text
}

/** The header's position, checked here: `watch()` would name `after` in its error, not the header. */
function resumePosition(header: string | string[] | undefined): number | string | undefined {
  // Node joins a repeated header with ", ": that is malformed too.
  const text = Array.isArray(header) ? header.join(', ') : header
  if (text === undefined || text === '') return undefined
  return readEventId(text, 'Last-Event-ID', 'header Last-Event-ID')
}

/**
 * An event id as a live feed writes it (a commit position, or a portable
 * position `P.tag`), given back by a client to resume after it: the
 * position as a number, the portable position as its text.
 * @param field the `field` of the error
 * @param named how the error message names where the id came from
 * @throws PriceStoreError `PRICE_INVALID_QUERY` for anything else
 */
export function readEventId(text: string, field: string, named: string): number | string {
  const trimmed = text.trim()
  if (parsePortablePosition(trimmed) !== undefined) return trimmed
  const value = position(trimmed)
  if (typeof value !== 'number' || !Number.isSafeInteger(value)) {
    throw fail('PRICE_INVALID_QUERY', field, `${named} must be an event id of this stream: a commit position, a whole number >= 0, or P.tag (got ${describeValue(text)})`)
  }
  return value
}
