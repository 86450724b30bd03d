import type { IncomingMessage, ServerResponse } from 'node:http'
import { PriceStoreError, describeValue } from '../../../errors.js'
import { checkIntegerOption } from '../../../rules/options.js'
import type { HttpAnswer } from './answer.js'

/*
 * Cross-origin reads: which web pages of other origins may read
 * the answers, and the preflight a browser sends first. Off unless the
 * host asks (`cors` option, `serve --cors`), and for reads only: writes and
 * admin endpoints are never opened to other origins (see docs/http.md, "CORS").
 * Below routing: the handler says which requests are reads.
 */

/** The handler's `cors` option: the origins whose pages may read the answers. */
export interface CorsOptions {
  /**
   * `'*'`: any origin; or the origins allowed, each as a browser sends it in
   * `Origin` (`https://app.example`, `http://localhost:5173`: scheme, host,
   * and port when not the scheme's default; no path).
   */
  readonly origins: '*' | readonly string[]
  /** How long a browser may keep a preflight's answer (s, default {@link DEFAULT_CORS_MAX_AGE}; browsers cap it, Chromium at 7,200). */
  readonly maxAgeSeconds?: number
}

/** Default time a browser may keep a preflight's answer (s). */
export const DEFAULT_CORS_MAX_AGE = 600

/**
 * Request headers a cross-origin read may send beyond the CORS-safelisted
 * ones: `Last-Event-ID` (an `EventSource` resuming the live stream),
 * `x-min-position` (a read at least at a position), `Cache-Control` (sent
 * by `EventSource`).
 */
export const CORS_REQUEST_HEADERS: readonly string[] = Object.freeze(['last-event-id', 'x-min-position', 'cache-control'])

/**
 * Answer headers a cross-origin page may read beyond the safelisted ones
 * (`content-type`, `content-length`, `cache-control`, ...): `retry-after`,
 * which says when to come back after a 503, `x-next-cursor` and `link`,
 * the next page of a paged answer (prices/page-answer.ts), and
 * `x-price-store-hint`, what an empty answer probably meant (prices/symbol-hint.ts).
 */
export const CORS_EXPOSED_HEADERS = 'retry-after, x-next-cursor, link, x-price-store-hint'

const READ_METHODS = 'GET, HEAD'

/** The checked CORS policy of one handler. */
export class CorsPolicy {
  readonly #anyOrigin: boolean
  readonly #origins: ReadonlySet<string>
  readonly #maxAge: string

  /**
   * The policy `option` asks for, or `undefined` (no CORS: the default).
   * @throws PriceStoreError `PRICE_INVALID_OPTIONS` for origins that are not `'*'` or a list of origins, or a bad `maxAgeSeconds`
   */
  static of(option: CorsOptions | undefined): CorsPolicy | undefined {
    if (option === undefined) return undefined
    if (typeof option !== 'object' || option === null) throw invalid(`option cors must be an object such as { origins: '*' } (got ${describeValue(option)})`)
    return new CorsPolicy(option)
  }

  private constructor(option: CorsOptions) {
    const origins: unknown = option.origins
    this.#anyOrigin = origins === '*'
    if (!this.#anyOrigin && (!Array.isArray(origins) || origins.length === 0)) {
      throw invalid(`option cors.origins must be '*' or a non-empty list of origins (got ${describeValue(origins)})`)
    }
    this.#origins = new Set(this.#anyOrigin ? [] : (origins as unknown[]).map(checkOrigin))
    this.#maxAge = String(checkIntegerOption('cors.maxAgeSeconds', option.maxAgeSeconds, DEFAULT_CORS_MAX_AGE, 0, 86_400))
  }

  /**
   * Marks a read's answer readable by the request's origin, when allowed:
   * `access-control-allow-origin` (`*`, or the origin itself) and
   * `access-control-expose-headers`. With a list of origins, every answer
   * says `vary: Origin`, so a cache keeps one answer per origin. Set on the
   * response before the answer is written: `writeHead` keeps them.
   */
  allowRead(req: IncomingMessage, res: ServerResponse): void {
    if (!this.#anyOrigin) res.setHeader('vary', 'Origin')
    const origin = this.#allowedOrigin(req.headers.origin)
    if (origin === undefined) return
    res.setHeader('access-control-allow-origin', origin)
    res.setHeader('access-control-expose-headers', CORS_EXPOSED_HEADERS)
  }

  /**
   * The answer to an `OPTIONS` request on a served path: 204 with `allow`,
   * and, for a preflight of a read (`read`) from an allowed origin asking
   * for GET or HEAD, the CORS headers that let it through: the origin, the
   * methods, the request headers asked for that are allowed
   * ({@link CORS_REQUEST_HEADERS}) and `access-control-max-age`. Any other
   * preflight (a write, an admin endpoint, another origin or method) gets
   * no `access-control-allow-origin`, so the browser does not send the request.
   * `postRead`: the path also reads with POST (a batch as-of with its list in
   * a JSON body), so POST and `Content-Type` are let through too.
   */
  preflight(req: IncomingMessage, read: boolean, allow: string, postRead = false): HttpAnswer {
    const headers: Record<string, string> = { allow }
    if (!this.#anyOrigin) headers.vary = 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers'
    const origin = this.#allowedOrigin(req.headers.origin)
    const method = req.headers['access-control-request-method']
    if (read && origin !== undefined && (method === 'GET' || method === 'HEAD' || (postRead && method === 'POST'))) {
      headers['access-control-allow-origin'] = origin
      headers['access-control-allow-methods'] = postRead ? `${READ_METHODS}, POST` : READ_METHODS
      const asked = allowedRequestHeaders(req.headers['access-control-request-headers'], postRead)
      if (asked !== '') headers['access-control-allow-headers'] = asked
      headers['access-control-max-age'] = this.#maxAge
    }
    return { status: 204, headers, body: '' }
  }

  /** What `access-control-allow-origin` says to a request from `origin`, or `undefined` when it may not read. */
  #allowedOrigin(origin: string | undefined): string | undefined {
    if (origin === undefined) return undefined
    if (this.#anyOrigin) return '*'
    return this.#origins.has(origin) ? origin : undefined
  }
}

/** The headers of `Access-Control-Request-Headers` that a read may send (with a body: `content-type` too), lower-case, comma-separated. */
function allowedRequestHeaders(asked: string | undefined, withBody: boolean): string {
  if (asked === undefined) return ''
  return asked
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .filter((name) => CORS_REQUEST_HEADERS.includes(name) || (withBody && name === 'content-type'))
    .join(', ')
}

/** An origin as browsers send it: `scheme://host[:port]`, lower-case, no path. */
function checkOrigin(origin: unknown): string {
  if (typeof origin === 'string') {
    try {
      const url = new URL(origin)
      if (url.origin !== 'null' && url.origin === origin.toLowerCase().replace(/\/$/, '')) return url.origin
    } catch {
      // not a URL: refused below
    }
  }
  throw invalid(`option cors.origins must list origins such as "https://app.example" (scheme, host and port; no path), got ${describeValue(origin)}`)
}

function invalid(message: string): PriceStoreError {
  return new PriceStoreError('PRICE_INVALID_OPTIONS', message, { details: { field: 'cors' } })
}
