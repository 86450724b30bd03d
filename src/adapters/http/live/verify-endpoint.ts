/**
 * `GET /prices/verify`: the report `store.verify()` resolves with, for the
 * parameters `symbol` or `symbols` (comma-separated; every symbol when
 * neither), `fromTimestamp` and `toTimestamp` (times as `/prices/export`
 * reads them), `recheck` (`true` or `false`) and `limit` (failing records
 * listed). Any other parameter is refused: a misspelt one must not widen
 * the report silently. One report at a time per handler (a recheck keeps
 * every core busy).
 */
import { describeValue } from '../../../errors.js'
import { fail } from '../../../rules/query-errors.js'
import { parseTimeText, readClockOnce, timeTextProblem } from '../../../rules/time-text.js'
import type { VerifyOptions, VerifyReport } from '../../../store/services/verify-report.js'
import type { ErrorReportOptions } from '../core/answer.js'
import type { LiveEndpointHandler } from './endpoint.js'
import { createReportEndpoint } from './report-endpoint.js'

/** What `GET /prices/verify` needs of a store: `PriceStore.verify`. */
export interface VerifySource {
  verify(options: VerifyOptions): Promise<VerifyReport>
}

/** The parameters `GET /prices/verify` takes. */
export const VERIFY_PARAMETERS = ['symbol', 'symbols', 'fromTimestamp', 'toTimestamp', 'recheck', 'limit'] as const

/** Reports made at once by one handler. */
export const MAX_VERIFY_REPORTS = 1

/** The endpoint over `store`. */
export function createVerifyEndpoint(store: VerifySource, options: ErrorReportOptions): LiveEndpointHandler {
  return createReportEndpoint({
    name: 'signature reports',
    maxAtOnce: MAX_VERIFY_REPORTS,
    make: (params, signal) => store.verify({ ...verifyOptionsOf(params), signal }),
  }, options)
}

/**
 * The options of `store.verify()` the parameters give; the store checks the values (symbol rules, the window, the limit).
 * @throws PriceStoreError `PRICE_INVALID_QUERY` (an unknown or repeated parameter, `recheck` not true or false, `limit`
 *   not a whole number), `PRICE_INVALID_RANGE` (a time that does not parse)
 */
export function verifyOptionsOf(params: URLSearchParams, now: () => number = Date.now): VerifyOptions {
  const seen = new Set<string>()
  const symbols: string[] = []
  const options: { from?: number; to?: number; recheck?: boolean; limit?: number } = {}
  const readNow = readClockOnce(now)
  for (const [name, value] of params) {
    if (!(VERIFY_PARAMETERS as readonly string[]).includes(name)) {
      throw fail('PRICE_INVALID_QUERY', name, `unknown parameter ${JSON.stringify(name)}: /prices/verify takes ${VERIFY_PARAMETERS.join(', ')}`)
    }
    if (seen.has(name)) throw fail('PRICE_INVALID_QUERY', name, `parameter ${name} is given more than once`)
    seen.add(name)
    if (name === 'symbol' || name === 'symbols') {
      if (seen.has('symbol') && seen.has('symbols')) throw fail('PRICE_INVALID_QUERY', 'symbols', 'give symbol or symbols, not both')
      symbols.push(...value.split(','))
    } else if (name === 'fromTimestamp' || name === 'toTimestamp') {
      const time = parseTimeText(value, readNow)
      if (time === undefined) throw fail('PRICE_INVALID_RANGE', name, timeTextProblem(name, value))
      options[name === 'fromTimestamp' ? 'from' : 'to'] = time
    } else if (name === 'recheck') {
      if (value !== 'true' && value !== 'false') throw fail('PRICE_INVALID_QUERY', name, `recheck must be true or false (got ${describeValue(value)})`)
      options.recheck = value === 'true'
    } else {
      if (!/^[0-9]{1,6}$/.test(value)) throw fail('PRICE_INVALID_QUERY', name, `limit must be a whole number (got ${describeValue(value)})`)
      options.limit = Number(value)
    }
  }
  return { ...(symbols.length === 0 ? {} : { symbols }), ...options }
}
