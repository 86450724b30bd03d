/**
 * `GET /feeds`: a page of the feed catalogue, the object `store.feeds()`
 * resolves with, for the parameters `limit`, `cursor` (the `next` of the
 * page before), `status`, `now`, `staleAfter` and `retiredAfter` (see
 * docs/http.md, "Feed catalogue"). Any other parameter is refused: a
 * misspelt one must not change the page silently. The catalogue is kept
 * by the store between commits, so most requests read nothing: it does not
 * go through the query gate. `cache-control: no-store`: ages and statuses
 * are those of now.
 */
import { describeValue } from '../../../errors.js'
import { fail } from '../../../rules/query-errors.js'
import { parseTimeText, readClockOnce, timeTextProblem } from '../../../rules/time-text.js'
import type { FeedCatalogue, FeedOptions, FeedStatus } from '../../../store/services/feeds.js'
import type { ErrorReportOptions } from '../core/answer.js'
import type { LiveEndpointHandler, LiveRequest } from './endpoint.js'
import { sendReport } from './report-endpoint.js'

/** What `GET /feeds` needs of a store: `PriceStore.feeds`. */
export interface FeedsSource {
  feeds(options?: FeedOptions): Promise<FeedCatalogue>
}

/** The parameters `GET /feeds` takes. */
export const FEEDS_PARAMETERS = ['limit', 'cursor', 'status', 'now', 'staleAfter', 'retiredAfter'] as const

/** The endpoint over `store`. */
export function createFeedsEndpoint(store: FeedsSource, options: ErrorReportOptions): LiveEndpointHandler {
  return (request) => serveFeeds(store, options, request)
}

function serveFeeds(store: FeedsSource, options: ErrorReportOptions, { req, res, params, head, compression }: LiveRequest): void {
  req.resume() // a body means nothing here
  const gone = new AbortController()
  res.once('close', () => gone.abort())
  void sendReport(() => store.feeds({ ...feedOptionsOf(params), signal: gone.signal }), options, { res, head, compression })
}

/**
 * The options of `store.feeds()` the parameters give; the store checks the values' ranges.
 * @throws PriceStoreError `PRICE_INVALID_QUERY` (an unknown or repeated parameter, a number that does not parse, a
 *   `now` that is not a time)
 */
export function feedOptionsOf(params: URLSearchParams, clock: () => number = Date.now): FeedOptions {
  const seen = new Set<string>()
  const options: { limit?: number; cursor?: string; status?: FeedStatus; now?: number; staleAfter?: number; retiredAfter?: number } = {}
  const readNow = readClockOnce(clock)
  for (const [name, value] of params) {
    if (!(FEEDS_PARAMETERS as readonly string[]).includes(name)) {
      throw fail('PRICE_INVALID_QUERY', name, `unknown parameter ${JSON.stringify(name)}: /feeds takes ${FEEDS_PARAMETERS.join(', ')}`)
    }
    if (seen.has(name)) throw fail('PRICE_INVALID_QUERY', name, `parameter ${name} is given more than once`)
    seen.add(name)
    if (name === 'cursor') options.cursor = value
    else if (name === 'status') options.status = value as FeedStatus // checked by the store
    else if (name === 'now') {
      const time = parseTimeText(value, readNow)
      if (time === undefined) throw fail('PRICE_INVALID_QUERY', name, timeTextProblem(name, value))
      options.now = time
    } else if (name === 'staleAfter') {
      if (!/^[0-9]{1,9}(\.[0-9]{1,9})?$/.test(value)) throw fail('PRICE_INVALID_QUERY', name, `staleAfter must be a number of heartbeats above 0, such as 3 or 2.5 (got ${describeValue(value)})`)
      options.staleAfter = Number(value)
    } else {
      // limit, retiredAfter: whole numbers, ranges checked by the store
      if (!/^[0-9]{1,16}$/.test(value)) throw fail('PRICE_INVALID_QUERY', name, `${name} must be a whole number (got ${describeValue(value)})`)
      options[name as 'limit' | 'retiredAfter'] = Number(value)
    }
  }
  return options
}
