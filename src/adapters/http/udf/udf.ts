import { toExactJson } from '../../../rules/exact-json.js'
import type { Limits, Provider } from '../../../types.js'
import { errorParts, reportError, type ErrorReportOptions, type HttpAnswer } from '../core/answer.js'
import { UDF_RESOLUTIONS, planHistory, readHistory, type HistoryPlan, type UdfHistorySource } from './udf-history.js'
import { UdfParams } from './udf-params.js'

/**
 * What the UDF endpoints read: `PriceStore` fits, and so does a test stub.
 * A host with a store lacking these serves `/prices` only.
 */
export interface UdfSource extends UdfHistorySource {
  /** Every symbol with a record, in the store's order. */
  symbols(): Promise<string[]>
  /** The caps in force: history answers at most `maxRangePoints` bars, search at most `maxSymbols` symbols. */
  readonly limits: Limits
  /** Named as the exchange of every symbol. */
  readonly provider: Provider
}

/** The UDF endpoints served under `/udf/`. */
export type UdfEndpoint = 'config' | 'symbols' | 'search' | 'history' | 'time'

const ENDPOINTS: ReadonlyMap<string, UdfEndpoint> = new Map(
  (['config', 'symbols', 'search', 'history', 'time'] as const).map((name) => [`/udf/${name}`, name]),
)

/** The UDF endpoint a request path names (`/udf/history` → `history`), or `undefined`. */
export function udfEndpoint(path: string): UdfEndpoint | undefined {
  return ENDPOINTS.get(path)
}

/** Options of {@link answerUdf}. */
export interface UdfOptions extends ErrorReportOptions {
  /**
   * Runs the store reads of one history request, which may be heavy, and
   * answers with `read`'s answer or one of its own in UDF's error shape
   * (see {@link udfErrorAnswer}). The HTTP listener passes one that goes
   * through its query gate; by default the reads run at once.
   */
  readonly runHistory?: (plan: HistoryPlan, read: () => Promise<HttpAnswer>) => Promise<HttpAnswer>
  /** The clock of `/udf/time` (default `Date.now`). */
  readonly now?: () => number
}

/** The resolutions offered, in TradingView's order. */
const SUPPORTED_RESOLUTIONS = Object.freeze(Object.keys(UDF_RESOLUTIONS))
const INTRADAY_MULTIPLIERS = Object.freeze(SUPPORTED_RESOLUTIONS.filter((resolution) => /^[0-9]+$/.test(resolution)))

/**
 * Answers one endpoint of TradingView's UDF protocol (the HTTP datafeed of
 * its charting library) from `source`: `config`, `symbols` (resolve one
 * symbol), `search`, `history` (bars) and `time`. UDF times are UNIX
 * seconds. Bad parameters answer 400 with the usual coded body, plus UDF's
 * `s: "error"` and `errmsg`, so UDF clients show the message too. Never rejects.
 *
 * @example
 * const { status, body } = await answerUdf(store, 'history', new URLSearchParams('symbol=BTC&resolution=60&from=1717027200&to=1717200000'))
 */
export async function answerUdf(source: UdfSource, endpoint: UdfEndpoint, params: URLSearchParams, options: UdfOptions = {}): Promise<HttpAnswer> {
  try {
    switch (endpoint) {
      case 'config':
        return jsonAnswer(200, udfConfig())
      case 'time':
        return timeAnswer((options.now ?? Date.now)())
      case 'symbols':
        return await symbolAnswer(source, params)
      case 'search':
        return jsonAnswer(200, await searchSymbols(source, params))
      case 'history': {
        const plan = planHistory(params, source.limits.maxRangePoints)
        const read = (): Promise<HttpAnswer> => readHistory(source, plan).then((history) => jsonAnswer(200, history), (err: unknown) => udfFailure(options, err))
        return await (options.runHistory === undefined ? read() : options.runHistory(plan, read))
      }
    }
  } catch (err) {
    return udfFailure(options, err)
  }
}

/** The configuration TradingView's UDF adapter asks for first. */
export function udfConfig(): Record<string, unknown> {
  return {
    supported_resolutions: SUPPORTED_RESOLUTIONS,
    supports_search: true,
    supports_group_request: false,
    supports_marks: false,
    supports_timescale_marks: false,
    supports_time: true,
    exchanges: [],
    symbols_types: [{ name: 'crypto', value: 'crypto' }],
  }
}

/**
 * Price scale for a symbol: 10^decimals, with about six significant digits
 * at its latest price and never fewer than two decimals (BTC at 67,012.5 →
 * 100, AR at 36.58 → 10,000, a stablecoin at 0.9998 → 1,000,000).
 */
export function priceScale(price: number | undefined): number {
  if (price === undefined || !Number.isFinite(price) || price === 0) return 100
  const magnitude = Math.floor(Math.log10(Math.abs(price)))
  return 10 ** Math.min(12, Math.max(2, 5 - magnitude))
}

async function symbolAnswer(source: UdfSource, params: URLSearchParams): Promise<HttpAnswer> {
  const symbol = new UdfParams(params, ['symbol']).symbol()
  if (!(await source.symbols()).includes(symbol)) {
    // UDF's adapter reads any body with `s` as "unknown symbol"; 404 tells everyone else.
    return udfErrorAnswer(404, 'HTTP_NOT_FOUND', `unknown symbol ${JSON.stringify(symbol)}: this store has no record of it`)
  }
  const [latest] = await source.latest(symbol, { limit: 1 })
  return jsonAnswer(200, {
    name: symbol,
    ticker: symbol,
    description: description(source, symbol),
    type: 'crypto',
    session: '24x7',
    timezone: 'Etc/UTC',
    exchange: source.provider.name,
    listed_exchange: source.provider.name,
    format: 'price',
    minmov: 1,
    pricescale: priceScale(latest?.value),
    has_intraday: true,
    has_daily: true,
    has_weekly_and_monthly: true,
    has_empty_bars: false,
    intraday_multipliers: INTRADAY_MULTIPLIERS,
    supported_resolutions: SUPPORTED_RESOLUTIONS,
    visible_plots_set: 'ohlcv',
    volume_precision: 0,
  })
}

/**
 * Symbols whose name holds `query` (ignoring case): exact matches first,
 * then those starting with it, then the rest, each in the store's order.
 */
async function searchSymbols(source: UdfSource, params: URLSearchParams): Promise<Record<string, string>[]> {
  const udf = new UdfParams(params, ['query', 'type', 'exchange', 'limit'])
  const query = (udf.text('query') ?? '').toUpperCase()
  const type = udf.text('type') ?? ''
  const exchange = udf.text('exchange') ?? ''
  // No limit: every match, up to the cap (TradingView always sends one; the chart page lists every symbol).
  const limit = udf.integer('limit', 'PRICE_INVALID_QUERY', 1, source.limits.maxSymbols) ?? source.limits.maxSymbols
  if ((type !== '' && type !== 'crypto') || (exchange !== '' && exchange !== source.provider.name)) return []
  const ranked: string[][] = [[], [], []]
  for (const symbol of await source.symbols()) {
    const name = symbol.toUpperCase()
    if (name === query) ranked[0]!.push(symbol)
    else if (name.startsWith(query)) ranked[1]!.push(symbol)
    else if (name.includes(query)) ranked[2]!.push(symbol)
  }
  return ranked.flat().slice(0, limit).map((symbol) => ({
    symbol,
    full_name: symbol,
    description: description(source, symbol),
    exchange: source.provider.name,
    ticker: symbol,
    type: 'crypto',
  }))
}

function description(source: UdfSource, symbol: string): string {
  return `${symbol} price signed by ${source.provider.name}`
}

function timeAnswer(now: number): HttpAnswer {
  const body = String(Math.floor(now / 1000))
  return { status: 200, headers: { 'content-type': 'text/plain; charset=utf-8', 'content-length': String(body.length) }, body }
}

/** The answer to anything thrown: coded like every other error, in UDF's shape; 5xx are reported. */
export function udfFailure(options: ErrorReportOptions, err: unknown): HttpAnswer {
  const { status, code, message, headers } = errorParts(err)
  if (status >= 500) reportError(options, err)
  return udfErrorAnswer(status, code, message, headers)
}

/**
 * The standard `{ error: { code, message } }` answer with UDF's `s: "error"`
 * and `errmsg` added, so UDF clients show the message too; `extraHeaders`
 * (`retry-after`) follow the body's own.
 */
export function udfErrorAnswer(status: number, code: string, message: string, extraHeaders: Readonly<Record<string, string>> = {}): HttpAnswer {
  const body = toExactJson({ s: 'error', errmsg: message, error: { code, message } })
  return {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8', 'content-length': String(Buffer.byteLength(body, 'utf8')), ...extraHeaders },
    body,
  }
}

function jsonAnswer(status: number, value: unknown): HttpAnswer {
  const body = toExactJson(value)
  return {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8', 'content-length': String(Buffer.byteLength(body, 'utf8')) },
    body,
  }
}
