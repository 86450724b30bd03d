import { PriceStoreError, describeValue } from '../../errors.js'
import { httpErrorAnswer, type HttpAnswer } from './core/answer.js'

/** Where the OpenAPI document (`live/openapi-endpoint.ts`) is served, below the handler's `basePath`. */
export const OPENAPI_PATH = '/openapi.yaml'

/** The methods a row of the route table may answer. */
export type RouteMethod = 'GET' | 'HEAD' | 'POST'

/** What routing reads of a row of the route table (`route-table.ts`). */
export interface RoutedRow {
  /** How metrics and the access log name what answers. */
  readonly endpoint: string
  /** Its paths below the handler's base path, compared undecoded. */
  readonly paths: readonly string[]
  /** The methods it answers; on its paths, other methods answer 405 with the methods of every row served there. */
  readonly methods: readonly RouteMethod[]
  /** Why a method of this row is refused (405) on a path another row serves, when this one is not served. */
  readonly refusal?: string
}

/** Where a request goes (see {@link routeRequest}): a row of the route table, or a ready answer (405). */
export type Route<Row extends RoutedRow = RoutedRow> = { readonly answer: HttpAnswer } | { readonly row: Row; readonly params: URLSearchParams }

/** The rows of the route table that one path leads to. */
interface PathRows<Row extends RoutedRow> {
  /** Those the handler serves, in the table's order (at least one). */
  readonly served: readonly Row[]
  /** Those it does not serve (a 405 for one of their methods says why). */
  readonly absent: readonly Row[]
}

/** What one handler serves, by path: from the route table, the rows it serves, and its base path. */
export interface ServedRoutes<Row extends RoutedRow = RoutedRow> {
  /** The prefix of every path served, from {@link checkBasePath}: `''` or `/x...` without a trailing `/`. */
  readonly basePath: string
  readonly paths: ReadonlyMap<string, PathRows<Row>>
}

/** The routes of a handler that serves those rows of `table` for which `serves` holds, below `basePath` (as {@link checkBasePath} gives it). */
export function servedRoutes<Row extends RoutedRow>(table: readonly Row[], serves: (row: Row) => boolean, basePath: string): ServedRoutes<Row> {
  const paths = new Map<string, { served: Row[]; absent: Row[] }>()
  for (const row of table) {
    for (const path of row.paths) {
      const rows = paths.get(path) ?? { served: [], absent: [] }
      ;(serves(row) ? rows.served : rows.absent).push(row)
      paths.set(path, rows)
    }
  }
  for (const [path, rows] of paths) if (rows.served.length === 0) paths.delete(path)
  return { basePath, paths }
}

/**
 * Where a request goes: the served row of its path that answers its method
 * (`params` decoded exactly as URLSearchParams does: malformed escapes stay
 * as text); or a 405 naming, in `allow`, the methods of the rows served there.
 * A path no served row has is `undefined`: the host's to answer (404, or its
 * own next handler).
 */
export function routeRequest<Row extends RoutedRow>(method: string | undefined, url: string, routes: ServedRoutes<Row>): Route<Row> | undefined {
  const target = splitTarget(url)
  const path = target === undefined ? undefined : pathBelow(target.path, routes.basePath)
  const rows = path === undefined ? undefined : routes.paths.get(path)
  if (target === undefined || rows === undefined) return undefined
  const takes = (row: Row): boolean => row.methods.includes(method as RouteMethod)
  const row = rows.served.find(takes)
  if (row !== undefined) return { row, params: new URLSearchParams(target.query) }
  const allow = [...new Set(rows.served.flatMap((served) => served.methods))]
  const refusal = rows.absent.find(takes)?.refusal
  const why = refusal !== undefined ? `: ${refusal}` : `; use ${allow.length === 1 ? allow[0] : `${allow.slice(0, -1).join(', ')} or ${allow.at(-1)}`}`
  return { answer: httpErrorAnswer(405, 'HTTP_METHOD_NOT_ALLOWED', `method ${JSON.stringify(method)} is not allowed on ${target.path}${why}`, { allow: allow.join(', ') }) }
}

/** What answers a route, as metrics and the access log name it (see `AccessLogEntry.endpoint`). */
export function endpointName(routed: Route | undefined): string {
  if (routed === undefined) return 'not_found'
  return 'answer' in routed ? 'method_not_allowed' : routed.row.endpoint
}

/** The paths the 404 names when served: the data, then the operations' (the UDF endpoints and the chart page are named together). */
const NAMED_DATA = ['/prices', '/prices/stream', '/prices/export', '/stats']
const NAMED_OPERATIONS = ['/health', '/metrics', OPENAPI_PATH]

/** The 404 answer for a path the handler does not serve, naming what it does serve. */
export function notFoundAnswer(routes: ServedRoutes): HttpAnswer {
  const base = routes.basePath
  const named = (paths: readonly string[]): string => paths.filter((path) => routes.paths.has(path)).map((path) => `${base}${path}`).join(', ')
  const served = `GET ${named(NAMED_DATA)}, ${named(NAMED_OPERATIONS)}`
  const charts = routes.paths.has('/') ? `, ${base}/udf/{config,symbols,search,history,time} and the chart page at ${base}/` : ''
  return httpErrorAnswer(404, 'HTTP_NOT_FOUND', `not found: the endpoints are ${served}${charts}`)
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
