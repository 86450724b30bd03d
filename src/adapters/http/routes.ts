import { PriceStoreError, describeValue } from '../../errors.js'
import { httpErrorAnswer, type HttpAnswer } from './core/answer.js'
import { CHART_SCRIPT_PATH } from './udf/chart-page.js'
import { udfEndpoint, type UdfEndpoint } from './udf/udf.js'

const ALLOW = 'GET, HEAD'

/** Where the OpenAPI document (`live/openapi-endpoint.ts`) is served, below the handler's `basePath`. */
export const OPENAPI_PATH = '/openapi.yaml'
const ALLOW_WRITES = 'GET, HEAD, POST'

/**
 * The endpoints of a live service, each answered by its own module
 * in `live/` through `live/live-endpoints.ts`: `write` is `POST /prices`, `stream` is
 * `GET /prices/stream`, `export` is `GET /prices/export`, `stats` is
 * `GET /stats`, `health` is `GET /health` and `metrics` is `GET /metrics`;
 * `backup` is `POST /admin/backup` (POST only).
 */
export type LiveEndpoint = 'write' | 'stream' | 'export' | 'stats' | 'health' | 'metrics' | 'quality' | 'verify' | 'backup'

/** Where a request goes (see {@link routeRequest}). */
export type Route =
  | { readonly answer: HttpAnswer }
  | { readonly params: URLSearchParams }
  | { readonly udf: UdfEndpoint; readonly params: URLSearchParams }
  | { readonly page: 'html' | 'script' }
  | { readonly document: 'openapi' }
  | { readonly live: LiveEndpoint; readonly params: URLSearchParams }
  /** `GET`, `HEAD` or `POST /prices/batch` (batch as-of; POST carries the batch as a JSON body, a read). */
  | { readonly batch: true; readonly params: URLSearchParams }

/** What a handler serves: whether it has charts, and under which path prefix. */
export interface RouteTable {
  /** The UDF endpoints and the chart page are served too. */
  readonly charts: boolean
  /** The prefix of every path served, from {@link checkBasePath}: `''` or `/x...` without a trailing `/`. */
  readonly basePath: string
  /** `POST /prices` takes records (a write token is configured). */
  readonly writes?: boolean
  /** The store can be watched, exported and counted: `/prices/stream`, `/prices/export` and `/stats` are served. */
  readonly live?: boolean
  /** `/prices/export` is served (default: as `live`), for a store that can be exported but not watched. */
  readonly exports?: boolean
  /** `/stats` is served (default: as `live`). */
  readonly stats?: boolean
  /** `/metrics` is served. */
  readonly metrics?: boolean
  /** `/prices/quality` is served (the store can report feed quality). */
  readonly quality?: boolean
  /** `/prices/verify` is served (the store can report on its records' signatures). */
  readonly verify?: boolean
  /** `POST /admin/backup` is served (a backup directory and a write token are configured). */
  readonly backup?: boolean
  /** `/prices/batch` is served (the store answers batch as-of). */
  readonly batch?: boolean
}

/**
 * Where a request goes: a query on `${basePath}/prices`, a UDF endpoint or
 * the chart page and its script (those only when `charts` are served), a
 * live endpoint (those the table serves: see {@link LiveEndpoint}), each for
 * GET or HEAD, or `POST /prices` when the table takes writes; or a ready
 * answer (405 for other methods on those paths).
 * A path the table does not serve is `undefined`: the host's to answer
 * (404, or its own next handler).
 */
export function routeRequest(method: string | undefined, url: string, table: RouteTable): Route | undefined {
  const target = splitTarget(url)
  const path = target === undefined ? undefined : pathBelow(target.path, table.basePath)
  if (target === undefined || path === undefined) return undefined
  const prices = path === '/prices' || path === '/prices/'
  const udf = table.charts ? udfEndpoint(path) : undefined
  const live = liveEndpoint(path, table)
  // The page is told the prefix (its script is loaded from below it, and asks for /prices and /udf/ there).
  const page = table.charts && path === '/' ? 'html' : table.charts && path === CHART_SCRIPT_PATH ? 'script' : undefined
  // The OpenAPI document: served by every handler, whatever its store.
  const document = path === OPENAPI_PATH ? 'openapi' : undefined
  const batch = table.batch === true && path === '/prices/batch'
  if (!prices && udf === undefined && page === undefined && live === undefined && document === undefined && !batch) return undefined
  if (batch) {
    // A read that may carry its batch as a body: POST needs no write token.
    if (method === 'GET' || method === 'HEAD' || method === 'POST') return { batch, params: new URLSearchParams(target.query) }
    return { answer: httpErrorAnswer(405, 'HTTP_METHOD_NOT_ALLOWED', `method ${JSON.stringify(method)} is not allowed on ${target.path}; use GET, HEAD or POST`, { allow: 'GET, HEAD, POST' }) }
  }
  // SPEC §2: decoded exactly as URLSearchParams does (malformed escapes stay as text).
  if (prices && method === 'POST' && table.writes === true) return { live: 'write', params: new URLSearchParams(target.query) }
  // The one route that takes POST only: it changes the server's disk.
  if (live === 'backup') {
    if (method === 'POST') return { live, params: new URLSearchParams(target.query) }
    return { answer: httpErrorAnswer(405, 'HTTP_METHOD_NOT_ALLOWED', `method ${JSON.stringify(method)} is not allowed on ${target.path}; use POST`, { allow: 'POST' }) }
  }
  if (method !== 'GET' && method !== 'HEAD') {
    const writable = prices && table.writes === true
    const allow = writable ? ALLOW_WRITES : ALLOW
    const why =
      prices && method === 'POST' ? ': this server takes no writes (it was started without a write token)' : `; use ${writable ? 'GET, HEAD or POST' : 'GET or HEAD'}`
    const message = `method ${JSON.stringify(method)} is not allowed on ${target.path}${why}`
    return { answer: httpErrorAnswer(405, 'HTTP_METHOD_NOT_ALLOWED', message, { allow }) }
  }
  if (page !== undefined) return { page }
  if (document !== undefined) return { document }
  const params = new URLSearchParams(target.query)
  if (live !== undefined) return { live, params }
  return udf === undefined ? { params } : { udf, params }
}

/** The `endpoint` name of each UDF route, as metrics and the access log name it. */
const UDF_ENDPOINTS: Readonly<Record<string, string>> = { config: 'udf_config', symbols: 'udf_symbols', search: 'udf_search', history: 'udf_history', time: 'udf_time' }

/** What answers a route, as metrics and the access log name it (see `AccessLogEntry.endpoint`). */
export function endpointName(routed: Route | undefined): string {
  if (routed === undefined) return 'not_found'
  if ('answer' in routed) return 'method_not_allowed'
  if ('page' in routed) return 'page'
  if ('document' in routed) return 'openapi'
  if ('live' in routed) return routed.live
  if ('batch' in routed) return 'batch'
  if ('udf' in routed) return UDF_ENDPOINTS[routed.udf] ?? 'udf'
  return 'prices'
}

/** The live endpoint at `path` (below the base path), when the table serves it. */
function liveEndpoint(path: string, table: RouteTable): LiveEndpoint | undefined {
  switch (path) {
    case '/prices/stream':
      return table.live === true ? 'stream' : undefined
    case '/prices/export':
      return (table.exports ?? table.live) === true ? 'export' : undefined
    case '/stats':
      return (table.stats ?? table.live) === true ? 'stats' : undefined
    case '/health':
      return 'health'
    case '/metrics':
      return table.metrics === true ? 'metrics' : undefined
    case '/prices/quality':
      return table.quality === true ? 'quality' : undefined
    case '/prices/verify':
      return table.verify === true ? 'verify' : undefined
    case '/admin/backup':
      return table.backup === true ? 'backup' : undefined
    default:
      return undefined
  }
}

/** The 404 answer for a path the table does not serve, naming what it does serve. */
export function notFoundAnswer(table: RouteTable): HttpAnswer {
  const base = table.basePath
  const live = [
    table.live === true ? `${base}/prices/stream` : undefined,
    (table.exports ?? table.live) === true ? `${base}/prices/export` : undefined,
    (table.stats ?? table.live) === true ? `${base}/stats` : undefined,
  ]
  const prices = [`${base}/prices`, ...live].filter((path) => path !== undefined).join(', ')
  const operations = `${base}/health${table.metrics === true ? `, ${base}/metrics` : ''}, ${base}${OPENAPI_PATH}`
  const served = !table.charts
    ? `GET ${prices}, ${operations}`
    : `GET ${prices}, ${operations}, ${base}/udf/{config,symbols,search,history,time} and the chart page at ${base}/`
  return httpErrorAnswer(404, 'HTTP_NOT_FOUND', `not found: the endpoints are ${served}`)
}

/**
 * Checks a handler's `basePath` and gives it in the one form routing
 * compares: `''` for none (also for `'/'`), else `/` and segments with no
 * trailing `/` (`'/v1/'` is `'/v1'`). It is compared with the path as sent,
 * undecoded, so it may not hold a query, a fragment, `%`, white space or
 * control characters.
 * @throws PriceStoreError `PRICE_INVALID_OPTIONS`
 */
export function checkBasePath(basePath: unknown): string {
  if (basePath === undefined) return ''
  if (typeof basePath !== 'string' || !basePath.startsWith('/') || /[?#%\s\p{Cc}]/u.test(basePath) || basePath.includes('//')) {
    throw new PriceStoreError(
      'PRICE_INVALID_OPTIONS',
      `option basePath must be a path such as "/v1": "/" then segments, with no "//", "?", "#", "%" or white space (got ${describeValue(basePath)})`,
      { details: { field: 'basePath' } },
    )
  }
  return basePath.endsWith('/') ? basePath.slice(0, -1) : basePath
}

/** The rest of `path` below `basePath` (`/v1/prices` below `/v1` is `/prices`), or `undefined` when it is not below it. */
function pathBelow(path: string, basePath: string): string | undefined {
  if (basePath === '') return path
  if (path === basePath) return '/'
  return path.startsWith(`${basePath}/`) ? path.slice(basePath.length) : undefined
}

/**
 * Splits a request target into its raw path and raw query. Origin-form
 * (`/prices?x`) is the usual case; absolute-form (`http://host/prices?x`)
 * must be accepted too (RFC 9112 §3.2.2). Anything else (`*`, garbage) has
 * no path. The path is compared undecoded, so `//prices` is not `/prices`.
 */
function splitTarget(url: string): { path: string; query: string } | undefined {
  let rest = url
  if (!rest.startsWith('/')) {
    const authority = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i.exec(rest)
    if (authority === null) return undefined
    rest = rest.slice(authority[0].length)
    if (!rest.startsWith('/')) rest = `/${rest}`
  }
  const hash = rest.indexOf('#')
  if (hash >= 0) rest = rest.slice(0, hash)
  const question = rest.indexOf('?')
  if (question < 0) return { path: rest, query: '' }
  return { path: rest.slice(0, question), query: rest.slice(question + 1) }
}
