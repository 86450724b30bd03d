/**
 * Hostile input to the HTTP service (SPEC §4, issue 5): raw requests that
 * fast-check builds byte by byte — methods (lowercase, garbage tokens),
 * targets (`//prices`, `/prices/../x`, `%2fprices`, absolute form, huge
 * paths), query strings (any Unicode, raw or percent-encoded, `%`-garbage,
 * repeated parameters, 50 KB), headers (odd names, duplicate or lying
 * `content-length`, `transfer-encoding: chunked` with bogus bodies, a header
 * over 16 KiB, `Expect`, `Upgrade`, no `Host`), bodies on GET, bare-LF line
 * ends, HTTP versions from 0.9 to 9 — sent over real sockets (node:net) to
 * a real server on 127.0.0.1. Queries also take the forms beyond RedStone's
 * (candles, gap fill with `maxAge`, `origin`, TWAP, as-of `direction` and
 * `tolerance`): built from a valid form of each, then broken by dropping a
 * parameter, adding others or repeating one, with well-formed and malformed
 * values. For every request:
 *
 * - a final answer with a status line arrives (a case fails only if none
 *   comes within 10 s). Two outcomes without one are allowed: past 16 KiB of
 *   request, a reset while we still write may beat the 431; and a client
 *   that half-closes right after its request is gone (Node's rule), so its
 *   connection may be closed unanswered — closed, never left hanging;
 * - never a 5xx while the store is open (a closed store: only 503
 *   `PRICE_NOT_OPEN`; a 500 only when a stub store forces it);
 * - every answer is `application/json; charset=utf-8` with an exact
 *   `content-length` (but the chart page at `/`, HTML); every 200 body is one of
 *   the answers docs/openapi.yaml documents (`PriceAnswer`); every non-200 body is exactly
 *   `{"error":{"code","message"}}` with the code documented for its status;
 * - the server still answers a normal GET afterwards.
 *
 * Well-formed requests are checked against an oracle: the documented
 * routing (path compared as sent) and `store.query`'s own answer.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import fc from 'fast-check'
import { parse } from 'yaml'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { answerClientError, answerConnect, createPricesListener, startServer, type RunningServer } from '../../src/adapters/http/node.js'
import { KNOWN_PARAMETERS } from '../../src/engine/parse-query.js'
import { PriceStore, PriceStoreError, isPriceStoreError } from '../../src/index.js'
import { answerToJson } from '../../src/http.js'
import type { PriceStoreErrorCode } from '../../src/index.js'
import { END, PROVIDER, demoRecords } from '../support/http/demo-server.js'
import { checkSchema } from '../support/http/schema-check.js'
import { exchange, type RawAnswer, type RawFailure } from './http-raw.js'

/** Small caps, so fuzzed queries reach them. */
const LIMITS = { maxLimit: 50, maxSymbols: 4, maxRangePoints: 40 }
const JSON_TYPE = 'application/json; charset=utf-8'
const INTERNAL_MESSAGE = 'internal error while answering the request'
/** Node's default limit on the request line plus headers. */
const MAX_HEAD = 16 * 1024

/** The codes each status may carry (docs/http.md, "Errors and status codes"). */
const CODES_BY_STATUS: Readonly<Record<number, readonly string[]>> = {
  400: [
    'PRICE_INVALID_SYMBOL', 'PRICE_INVALID_QUERY', 'PRICE_INVALID_RANGE', 'PRICE_INVALID_INTERVAL',
    'PRICE_UNSUPPORTED_PROVIDER', 'PRICE_RANGE_TOO_LARGE', 'HTTP_BAD_REQUEST',
  ],
  404: ['HTTP_NOT_FOUND'],
  405: ['HTTP_METHOD_NOT_ALLOWED'],
  408: ['HTTP_REQUEST_TIMEOUT'],
  431: ['HTTP_HEADERS_TOO_LARGE'],
  500: ['HTTP_INTERNAL_ERROR', 'PRICE_STORAGE_ERROR', 'PRICE_CORRUPT_VALUE', 'PRICE_UNSUPPORTED_FORMAT', 'PRICE_LOCKED', 'PRICE_INVALID_OPTIONS'],
  503: ['PRICE_NOT_OPEN', 'HTTP_BUSY', 'HTTP_QUERY_TIMEOUT'],
}

let dir: string
/** A stand-in for the chart page's script, so `/` answers its page whether or not dist/ is built. */
let chartScript: string
let store: PriceStore
let server: RunningServer
const serverErrors: unknown[] = []
/** docs/openapi.yaml, whose `PriceAnswer` every 200 body must be. */
let openapi: unknown
const ANSWER_SCHEMA = { $ref: '#/components/schemas/PriceAnswer' }

beforeAll(async () => {
  openapi = parse(await readFile(new URL('../../docs/openapi.yaml', import.meta.url), 'utf8'))
  dir = await mkdtemp(join(tmpdir(), 'price-store-http-fuzz-'))
  chartScript = join(dir, 'chart.js')
  await writeFile(chartScript, '/* stand-in */\n')
  // classic-level on disk: real I/O, so answers are truly asynchronous.
  store = await PriceStore.open(join(dir, 'db'), { provider: PROVIDER, limits: LIMITS })
  await store.putMany(demoRecords())
  // Short receive timeouts, so a request that never completes is answered 408 well within the bound.
  server = await startServer({ store, chartScript, headersTimeoutMs: 1_500, requestTimeoutMs: 3_000, onError: (err) => serverErrors.push(err) })
})

afterAll(async () => {
  await server?.close()
  await store?.close()
  if (dir !== undefined) await rm(dir, { recursive: true, force: true })
})

// ---------------------------------------------------------------- requests

interface FuzzRequest {
  readonly method: string
  readonly target: string
  readonly version: string
  readonly host: boolean
  readonly headers: readonly (readonly [string, string])[]
  readonly body: string
  readonly contentLength: 'none' | 'exact' | 'more' | 'less' | 'twice' | 'conflicting'
  readonly lineEnd: '\r\n' | '\n'
  readonly encoding: 'utf8' | 'latin1'
  readonly halfClose: boolean
}

/** The request's bytes. */
function serialize(request: FuzzRequest): Buffer {
  const { lineEnd: eol } = request
  const requestLine = request.version === '' ? `${request.method} ${request.target}` : `${request.method} ${request.target} ${request.version}`
  const lines = [requestLine]
  if (request.host) lines.push('Host: 127.0.0.1')
  for (const [name, value] of request.headers) lines.push(`${name}: ${value}`)
  const length = Buffer.byteLength(request.body, request.encoding)
  switch (request.contentLength) {
    case 'none':
      break
    case 'exact':
      lines.push(`Content-Length: ${length}`)
      break
    case 'more':
      lines.push(`Content-Length: ${length + 7}`)
      break
    case 'less':
      lines.push(`Content-Length: ${Math.max(0, length - 3)}`)
      break
    case 'twice':
      lines.push(`Content-Length: ${length}`, `Content-Length: ${length}`)
      break
    case 'conflicting':
      lines.push(`Content-Length: ${length}`, `Content-Length: ${length + 1}`)
      break
  }
  return Buffer.from(`${lines.join(eol)}${eol}${eol}${request.body}`, request.encoding)
}

const KNOWN = [...KNOWN_PARAMETERS]
/** The parameters of the forms beyond RedStone's. */
const BEYOND = ['aggregate', 'fill', 'maxAge', 'origin', 'direction', 'tolerance']
const SYMBOLS = ['BTC', 'ETH', 'AR', 'stETH', 'USDC.e', 'NOPE', '__proto__']
const HOUR = 3_600_000
const MAX_SAFE = String(Number.MAX_SAFE_INTEGER)

/** A parameter value: plausible, numeric, or any Unicode (lone surrogates included). */
const valueArb = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...SYMBOLS, 'BTC,ETH', 'BTC,ETH,AR,stETH,USDC.e', 'redstone', PROVIDER.id, 'other', '') },
  {
    weight: 2,
    arbitrary: fc.constantFrom('candles', 'twap', 'prev', 'before', 'after', 'nearest', 'Candles', 'TWAP', 'ohlc', 'next', 'none', 'prev,prev', 'before ', 'near'),
  },
  {
    weight: 4,
    arbitrary: fc.oneof(
      fc.constantFrom('0', '1', '5', '40', '41', '50', '51', '3600000', '60000', '-1', '1.5', '1e3', '00010', '9007199254740992', ' 1'),
      fc.constantFrom('-0', '--1', '+5', '-', '0x10', '-7200000', MAX_SAFE, `-${MAX_SAFE}`, '-9007199254740992', '86400000'),
      fc.integer({ min: END - 3 * 3_600_000, max: END + 60_000 }).map(String),
      fc.nat().map(String),
      fc.integer({ min: -2 * 86_400_000, max: 0 }).map(String),
    ),
  },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 12 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 12 }) },
  {
    weight: 2,
    arbitrary: fc
      .array(fc.constantFrom('%', '%z', '%zz', '%E0%A4%A', '%C0%AF', '%FF', '%00', '%0A', '%0D', '%2C', '%26', '%3D', '%23', '+', '%25', 'a', 'B', ','), { maxLength: 8 })
      .map((parts) => parts.join('')),
  },
)

/** How a value goes into the request line: percent-encoded UTF-8 bytes, or raw (spaces, CR, LF, `#` and all). */
function encodeValue(value: string, mode: 'encoded' | 'raw' | 'verbatim'): string {
  if (mode === 'raw') return value
  // 'verbatim' keeps %-garbage as typed, encoding only what would break the request line.
  if (mode === 'verbatim') return value.replace(/[^\x21-\x7e]|[#&=]/gu, (c) => [...Buffer.from(c, 'utf8')].map((b) => `%${b.toString(16).padStart(2, '0')}`).join(''))
  return [...Buffer.from(value, 'utf8')].map((b) => `%${b.toString(16).padStart(2, '0').toUpperCase()}`).join('')
}

/** The window of a form: around the demo data (END - 2 h to END), occasionally anywhere or reversed. */
const timeArb = fc.oneof(
  { weight: 8, arbitrary: fc.integer({ min: END - 3 * HOUR, max: END + HOUR }) },
  { weight: 1, arbitrary: fc.constantFrom(0, END, Number.MAX_SAFE_INTEGER) },
)
const windowArb = fc.record({ from: timeArb, to: timeArb, reversed: fc.oneof({ weight: 9, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }) })
  .map(({ from, to, reversed }) => ((from <= to) !== reversed ? { from, to } : { from: to, to: from }))
/** Mostly widths that keep a window of the demo data under the cap of 40 buckets. */
const intervalArb = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom('600000', '1800000', '3600000', '86400000') },
  { weight: 2, arbitrary: fc.constantFrom('1', '1000', '60000', '300000') },
  { weight: 2, arbitrary: fc.integer({ min: 300_000, max: 3 * HOUR }).map(String) },
  { weight: 1, arbitrary: fc.constantFrom(MAX_SAFE, '4503599627370496', '0', '-60000') },
)
/** A millisecond count (maxAge, tolerance). */
const msArb = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: 0, max: 4 * HOUR }).map(String) },
  { weight: 1, arbitrary: fc.constantFrom('0', MAX_SAFE, '-1', '1.5') },
)
const originArb = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: -2 * 86_400_000, max: 2 * 86_400_000 }).map(String) },
  { weight: 1, arbitrary: fc.constantFrom('0', '-0', '-7200000', MAX_SAFE, `-${MAX_SAFE}`, '1.5', '--1') },
)
/** `symbol=S`, `symbols=A,B`, or neither. */
const whoArb = fc.oneof(
  { weight: 2, arbitrary: fc.constantFrom(...SYMBOLS).map((symbol): [string, string][] => [['symbol', symbol]]) },
  { weight: 1, arbitrary: fc.constantFrom('BTC,ETH', 'ETH,NOPE,AR', 'BTC,ETH', 'ETH,NOPE,AR', 'BTC,ETH,AR,stETH,USDC.e').map((symbols): [string, string][] => [['symbols', symbols]]) },
  { weight: 1, arbitrary: fc.constant<[string, string][]>([]) },
)
/** Half the time absent. */
const optional = <T,>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined, freq: 2 })
/** Pairs for the parameters given. */
const pairs = (params: Record<string, string | number | undefined>): [string, string][] =>
  Object.entries(params).flatMap(([name, value]) => (value === undefined ? [] : [[name, String(value)] as [string, string]]))

/** A valid query of a form beyond RedStone's: candles, a gap-filled or shifted range, TWAP or a directed as-of lookup. */
const beyondFormArb: fc.Arbitrary<[string, string][]> = fc.oneof(
  {
    // Candles and the range form, each with or without fill, maxAge, origin, offset and limit.
    weight: 2,
    arbitrary: fc
      .record({
        symbol: fc.constantFrom(...SYMBOLS),
        window: windowArb,
        interval: intervalArb,
        aggregate: optional(fc.constant('candles')),
        fill: optional(fc.constant('prev')),
        maxAge: optional(msArb),
        origin: optional(originArb),
        offset: optional(fc.oneof({ weight: 4, arbitrary: fc.nat({ max: 3 }) }, { weight: 1, arbitrary: fc.nat({ max: 60 }) })),
        limit: optional(fc.oneof({ weight: 9, arbitrary: fc.integer({ min: 1, max: 50 }) }, { weight: 1, arbitrary: fc.constantFrom(0, 51) })),
      })
      .map(({ window, fill, maxAge, ...rest }) => pairs({ ...rest, fromTimestamp: window.from, toTimestamp: window.to, fill, maxAge: fill === undefined ? undefined : maxAge })),
  },
  {
    // TWAP for one symbol, several or all.
    weight: 1,
    arbitrary: fc.record({ who: whoArb, window: windowArb }).map(({ who, window }) => [...who, ...pairs({ fromTimestamp: window.from, toTimestamp: window.to, aggregate: 'twap' })]),
  },
  {
    // As-of lookups around toTimestamp.
    weight: 1,
    arbitrary: fc
      .record({
        who: whoArb,
        to: timeArb,
        direction: optional(fc.constantFrom('before', 'after', 'nearest')),
        tolerance: optional(msArb),
        limit: optional(fc.constant('1')),
        offset: optional(fc.constant('0')),
      })
      .map(({ who, to, ...rest }) => [...who, ...pairs({ toTimestamp: to, ...rest })]),
  },
)

/** Absent `weight` times out of `weight + 1`. */
const sometimes = <T,>(arb: fc.Arbitrary<T>, weight: number) => fc.oneof({ weight, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: arb })

/**
 * A query of a form beyond RedStone's, often broken: a parameter dropped,
 * one given again, or others added (well-formed and malformed values), in
 * any order.
 */
const beyondQueryArb: fc.Arbitrary<[string, string][]> = fc
  .record({
    form: beyondFormArb,
    drop: sometimes(fc.nat(), 3),
    repeat: sometimes(fc.nat(), 8),
    extra: fc.oneof(
      { weight: 5, arbitrary: fc.constant([]) },
      { weight: 2, arbitrary: fc.array(fc.tuple(fc.constantFrom(...KNOWN), fc.oneof(valueArb, intervalArb, originArb, msArb)), { minLength: 1, maxLength: 2 }) },
    ),
  })
  .map(({ form, drop, repeat, extra }) => {
    const kept = drop === undefined || form.length === 0 ? form : form.filter((_, i) => i !== drop % form.length)
    const repeated = repeat === undefined || kept.length === 0 ? [] : [kept[repeat % kept.length]!]
    return [...kept, ...repeated, ...extra]
  })
  // In any order: the order of parameters must not matter.
  .chain((params) => fc.shuffledSubarray(params, { minLength: params.length, maxLength: params.length }))

/** A query's text from its parameters, each name and value encoded the same way. */
function queryText(params: readonly (readonly [string, string])[], mode: 'encoded' | 'raw' | 'verbatim'): string {
  return params.map(([name, value]) => `${encodeValue(name, mode)}=${encodeValue(value, mode)}`).join('&')
}

/** {@link beyondQueryArb} as text, percent-encoded or typed as is. */
const beyondTextArb = fc.tuple(beyondQueryArb, fc.constantFrom<'encoded' | 'verbatim'>('encoded', 'verbatim')).map(([params, mode]) => queryText(params, mode))

const paramArb = fc.record({
  name: fc.oneof({ weight: 5, arbitrary: fc.constantFrom(...KNOWN) }, { weight: 1, arbitrary: fc.constantFrom('pad', 'Symbol', 'symbol[]', '__proto__', 'sym%62ol', '') }, { weight: 1, arbitrary: fc.string({ maxLength: 6 }) }),
  value: valueArb,
  mode: fc.constantFrom<'encoded' | 'raw' | 'verbatim'>('encoded', 'encoded', 'verbatim', 'verbatim', 'raw'),
  bare: fc.boolean(), // `name` without `=`
})

const queryArb = fc.oneof(
  { weight: 8, arbitrary: fc.array(paramArb, { maxLength: 7 }).map((params) => params.map((p) => (p.bare && p.value === '' ? encodeValue(p.name, p.mode) : `${encodeValue(p.name, p.mode)}=${encodeValue(p.value, p.mode)}`)).join('&')) },
  { weight: 4, arbitrary: fc.tuple(beyondQueryArb, fc.constantFrom<'encoded' | 'raw' | 'verbatim'>('encoded', 'verbatim', 'raw')).map(([params, mode]) => queryText(params, mode)) },
  { weight: 1, arbitrary: fc.constantFrom(`pad=${'x'.repeat(50_000)}`, `symbols=${Array.from({ length: 5_000 }, (_, i) => `S${i}`).join(',')}`, `symbol=BTC&pad=${'%zz'.repeat(5_000)}`) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 40 }) },
)

const pathArb = fc.oneof(
  { weight: 10, arbitrary: fc.constantFrom('/prices', '/prices/') },
  {
    weight: 4,
    arbitrary: fc.constantFrom(
      '//prices', '/prices/../x', '/x/../prices', '%2fprices', '/%70rices', '/PRICES', '/prices//', '/prices/x', '/', '',
      '*', 'http://127.0.0.1/prices', 'http://x/prices/', 'HTTPS://h:1/prices', 'http://x', 'ftp://x/prices', '/prices;x',
      '/prices%00', '/prices%2F', '\\prices', '/pr ices', '/prices\u00e9', '/prices\t',
    ),
  },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 20_000 }).map((n) => `/${'a'.repeat(n)}`) },
  { weight: 1, arbitrary: fc.string({ maxLength: 20 }) },
)

const targetArb = fc
  .record({ path: pathArb, query: fc.option(queryArb, { nil: undefined, freq: 4 }), fragment: fc.option(fc.constantFrom('#', '#x', '#symbol=ETH'), { nil: undefined, freq: 8 }) })
  .map(({ path, query, fragment }) => `${path}${query === undefined ? '' : `?${query}`}${fragment ?? ''}`)

const methodArb = fc.oneof(
  { weight: 10, arbitrary: fc.constantFrom('GET', 'HEAD') },
  { weight: 3, arbitrary: fc.constantFrom('POST', 'PUT', 'DELETE', 'OPTIONS', 'PATCH', 'TRACE', 'CONNECT', 'PROPFIND', 'PURGE', 'SEARCH') },
  { weight: 2, arbitrary: fc.constantFrom('get', 'head', 'Get', 'gEt', 'GETT', 'G ET', '', 'GET\t', 'HEAD\u0000', 'PRI') },
  { weight: 1, arbitrary: fc.stringMatching(/^[A-Za-z!#$%&'*+.^_`|~-]{1,12}$/) },
  { weight: 1, arbitrary: fc.string({ minLength: 1, maxLength: 8 }) },
)

const versionArb = fc.oneof(
  { weight: 12, arbitrary: fc.constant('HTTP/1.1') },
  { weight: 2, arbitrary: fc.constant('HTTP/1.0') },
  { weight: 2, arbitrary: fc.constantFrom('', 'HTTP/2.0', 'HTTP/1.2', 'HTTP/0.9', 'http/1.1', 'HTTP/1.1 x', 'HTTP/9', 'HTTP/1.', 'HTTP/11') },
)

const headerArb = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.constantFrom<readonly [string, string]>(
      ['Accept', 'application/json'], ['Connection', 'close'], ['Connection', 'keep-alive'], ['Connection', 'upgrade'],
      ['Upgrade', 'websocket'], ['Upgrade', 'h2c'], ['Expect', '100-continue'], ['Expect', 'teapot'],
      ['Transfer-Encoding', 'chunked'], ['Transfer-Encoding', 'gzip, chunked'], ['Transfer-Encoding', 'identity'], ['Transfer-Encoding', 'chunked, chunked'],
      ['Content-Length', '0'], ['Content-Length', '-1'], ['Content-Length', 'abc'], ['Content-Length', '99999999999999999999'], ['Content-Length', '1, 1'],
      ['Host', 'second.example'], ['Host', ''], ['Content-Type', 'application/x-www-form-urlencoded'], ['Cookie', 'a=b'],
      ['X-Forwarded-For', '10.0.0.1'], ['Range', 'bytes=0-10'], ['If-None-Match', '*'], ['Accept-Encoding', 'gzip, br'],
      ['Host ', 'x'], [' Host', 'x'], ['X Odd', 'y'], ['X-Odd', 'a\u0000b'], ['X-Long', 'x'.repeat(17_000)], ['', 'nameless'], ['X-Unicode', 'ü€😀'],
    ),
  },
  { weight: 1, arbitrary: fc.tuple(fc.stringMatching(/^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,16}$/), fc.string({ maxLength: 30 })) },
  { weight: 1, arbitrary: fc.tuple(fc.string({ maxLength: 10 }), fc.string({ unit: 'grapheme', maxLength: 20 })) },
)

const bodyArb = fc.oneof(
  { weight: 6, arbitrary: fc.constant('') },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      '5\r\nhello\r\n0\r\n\r\n', '0\r\n\r\n', 'zz\r\nbogus\r\n', 'ffffffffffffffffff\r\nx', '5\r\nhi\r\n', '3\r\nabc', '-1\r\n\r\n',
      '5;ext=1\r\nhello\r\n0\r\nTrailer: x\r\n\r\n', '{"symbol":"BTC"}', 'symbol=BTC', 'GET /prices HTTP/1.1\r\nHost: x\r\n\r\n',
    ),
  },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 200 }) },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 100_000 }).map((n) => 'b'.repeat(n)) },
)

const hostileRequestArb: fc.Arbitrary<FuzzRequest> = fc.record({
  method: methodArb,
  target: targetArb,
  version: versionArb,
  host: fc.constantFrom(true, true, true, false), // mostly present
  headers: fc.array(headerArb, { maxLength: 4 }),
  body: bodyArb,
  contentLength: fc.constantFrom<FuzzRequest['contentLength']>('none', 'none', 'exact', 'exact', 'more', 'less', 'twice', 'conflicting'),
  lineEnd: fc.constantFrom<FuzzRequest['lineEnd']>('\r\n', '\r\n', '\r\n', '\n'),
  encoding: fc.constantFrom<FuzzRequest['encoding']>('utf8', 'utf8', 'latin1'),
  halfClose: fc.boolean(),
})

/** A request Node can parse, with a hostile query: most of these reach the store. */
const parseableRequestArb: fc.Arbitrary<FuzzRequest> = fc.record({
  method: fc.constantFrom('GET', 'GET', 'GET', 'HEAD', 'POST', 'OPTIONS', 'DELETE'),
  target: fc
    .record({
      path: fc.constantFrom('/prices', '/prices', '/prices', '/prices/', '//prices', '/prices/../x', '/%70rices', 'http://127.0.0.1/prices'),
      query: fc.oneof(
        fc
          .array(fc.record({ name: paramArb.map((p) => p.name), value: valueArb, mode: fc.constantFrom<'encoded' | 'verbatim'>('encoded', 'verbatim') }), { maxLength: 6 })
          .map((params) => params.map((p) => `${encodeValue(p.name, p.mode)}=${encodeValue(p.value, p.mode)}`).join('&')),
        beyondTextArb,
      ),
    })
    .map(({ path, query }) => `${path}?${query}`),
  version: fc.constantFrom('HTTP/1.1', 'HTTP/1.1', 'HTTP/1.0'),
  host: fc.constant(true),
  headers: fc.array(
    fc.constantFrom<readonly [string, string]>(
      ['Accept', 'application/json'], ['Connection', 'close'], ['Connection', 'keep-alive'], ['Upgrade', 'websocket'],
      ['Expect', '100-continue'], ['Expect', 'teapot'], ['Cookie', 'a=b'], ['X-Unicode', 'ü€😀'], ['Host', 'second.example'],
    ),
    { maxLength: 3 },
  ),
  body: fc.oneof(fc.constant(''), fc.string({ unit: 'grapheme', maxLength: 50 })),
  contentLength: fc.constantFrom<FuzzRequest['contentLength']>('none', 'exact', 'more'),
  lineEnd: fc.constant<FuzzRequest['lineEnd']>('\r\n'),
  encoding: fc.constant<FuzzRequest['encoding']>('utf8'),
  halfClose: fc.boolean(),
})

/** Half hostile at every level, half parseable with a hostile query. */
const requestArb = fc.oneof(hostileRequestArb, parseableRequestArb)

// ------------------------------------------------------------------ checks

/**
 * The documented shape of any answer to any request: a final status line,
 * JSON of the exact length announced, and for non-200 statuses exactly
 * `{"error":{"code","message"}}` with a code documented for that status.
 */
function checkShape(result: RawAnswer, allowed: readonly number[]): void {
  expect(result.interim.every((status) => status === 100), `interim ${result.interim.join(',')}`).toBe(true)
  if (result.headers['content-type'] === 'text/html; charset=utf-8') {
    // The chart page at `/`: static, so served whatever the store's state.
    expect(result.status).toBe(200)
    expect(result.body === '' || result.body.startsWith('<!doctype html>')).toBe(true)
    return
  }
  expect(allowed, `status ${result.statusLine}`).toContain(result.status)
  expect(result.headers['content-type']).toBe(JSON_TYPE)
  const length = Number(result.headers['content-length'])
  expect(Number.isSafeInteger(length) && length >= 0, `content-length ${result.headers['content-length']}`).toBe(true)
  if (result.body === '' && length > 0) return // a HEAD answer
  expect(result.sentLength).toBe(length)
  const body: unknown = JSON.parse(result.body)
  if (result.status === 200) {
    expect(typeof body === 'object' && body !== null).toBe(true)
    expect(checkSchema(body, ANSWER_SCHEMA, openapi), `a documented answer: ${result.body.slice(0, 300)}`).toEqual([])
    for (const record of fullRecords(body as object)) {
      expect(record.provider).toBe(PROVIDER.id)
      expect(record.providerPublicKey).toBe(PROVIDER.publicKey)
    }
    const shape = shapeOf(body as object)
    shapes.set(shape, (shapes.get(shape) ?? 0) + 1)
    return
  }
  expect(body).toEqual({ error: { code: expect.any(String), message: expect.any(String) } })
  const { code, message } = (body as { error: { code: string; message: string } }).error
  expect(CODES_BY_STATUS[result.status], `code ${code} for ${result.status}`).toContain(code)
  expect(message.length).toBeGreaterThan(0)
  if (code.startsWith('PRICE_')) for (const name of BEYOND) if (message.includes(name)) refusing.add(name)
  if (result.status === 405) expect(result.headers.allow).toBe('GET, HEAD')
  if (result.status === 500) expect(message).toBe(INTERNAL_MESSAGE)
  if (result.status === 503 && code !== 'PRICE_NOT_OPEN') expect(result.headers['retry-after']).toBe('1')
}

/** What the hostile runs reached: `status code` (or `reset`) → count. */
const reached = new Map<string, number>()
/** The shapes of the 200 answers seen (see {@link shapeOf}) → count. */
const shapes = new Map<string, number>()
/** The parameters beyond RedStone's that a 400's message named. */
const refusing = new Set<string>()

/** The items of an answer: an array's, or an object's values. */
function itemsOf(body: object): Record<string, unknown>[] {
  return (Array.isArray(body) ? body : Object.values(body)) as Record<string, unknown>[]
}

/** The full records in an answer: its items, or the records of its filled points (candles and TWAPs only name records). */
function fullRecords(body: object): Record<string, unknown>[] {
  return itemsOf(body)
    .filter((item) => !('open' in item) && !('twap' in item))
    .map((item) => ('record' in item ? (item.record as Record<string, unknown>) : item))
}

/** Which documented answer a non-empty one is: records, sampled, several, filled, candles or twap. */
function shapeOf(body: object): string {
  const first = itemsOf(body)[0]
  if (first === undefined) return 'empty'
  if ('open' in first) return 'candles'
  if ('record' in first) return 'filled'
  if ('twap' in first) return 'twap'
  if (!Array.isArray(body)) return 'several'
  return 'minutes' in first ? 'sampled' : 'records'
}

/**
 * The outcome of one hostile request: an answer of the documented shape; or,
 * past 16 KiB, a reset while writing; or, when the client half-closed right
 * after its request, a closed connection (a FIN means the client is gone).
 * Never a hang.
 */
/** Nothing, or only interim 1xx responses (status line, headers, blank line). */
const INTERIM_ONLY = /^(?:HTTP\/1\.1 1\d\d[^\r\n]*\r\n(?:[^\r\n]+\r\n)*\r\n)*$/

function checkOutcome(result: RawAnswer | RawFailure, request: { bytes: Buffer; halfClose: boolean }, allowed: readonly number[], what: string): void {
  const { bytes } = request
  if (result.kind === 'answer') {
    checkShape(result, allowed)
    const code = result.body === '' ? 'HEAD' : result.status === 200 ? 'ok' : (JSON.parse(result.body) as { error: { code: string } }).error.code
    const key = `${result.status} ${code}`
    reached.set(key, (reached.get(key) ?? 0) + 1)
    return
  }
  expect(result.kind, `${what}: no answer within 10 s; received ${JSON.stringify(result.received.slice(0, 200))}`).toBe('closed')
  // A client that half-closed is gone (documented): it gets no final answer, at most the
  // interim "100 Continue" Node sends by itself for `Expect: 100-continue`.
  if (request.halfClose && INTERIM_ONLY.test(result.received)) {
    reached.set('gone', (reached.get('gone') ?? 0) + 1)
    return
  }
  reached.set('reset', (reached.get('reset') ?? 0) + 1)
  // Past Node's head limit the server answers 431 once it has read 16 KiB and
  // closes; a reset can then beat the answer while we still write the rest.
  const resetWhileWriting = result.kind === 'closed' && bytes.length > MAX_HEAD && result.received === '' && /ECONNRESET|EPIPE/.test(result.error ?? '')
  expect(resetWhileWriting, `${what}: no answer (${result.kind}${result.error === undefined ? '' : `, ${result.error}`}); received ${JSON.stringify(result.received.slice(0, 200))}`).toBe(true)
}

/** The server still answers a normal request, on a new connection. */
async function checkStillServing(url: string, expectedStatus: number): Promise<void> {
  const result = await exchange(url, 'GET /prices?symbol=BTC HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n')
  expect(result.kind).toBe('answer')
  expect((result as RawAnswer).status).toBe(expectedStatus)
}

/**
 * Sends one well-formed request and checks its answer against the oracle:
 * docs/http.md's routing (the path compared as sent), then what the server
 * does with URLSearchParams of the raw query: `store.plan`, `store.cost`
 * (which refuses a range sure to be over the cap before it is read:
 * "at least N records") and `store.query`.
 */
async function checkAgainstOracle(method: string, path: string, query: string, version: string): Promise<void> {
  const target = query === '' ? path : `${path}?${query}`
  const result = await exchange(server.url, `${method} ${target} ${version}\r\nHost: 127.0.0.1\r\n\r\n`, { head: method === 'HEAD' })
  expect(result.kind).toBe('answer')
  const answer = result as RawAnswer
  checkShape(answer, [200, 400, 404, 405])
  const routePath = path.replace(/^http:\/\/[^/]*/, '')
  let status: number
  let body: string
  if (routePath !== '/prices' && routePath !== '/prices/') {
    status = 404
    body = ''
  } else if (method !== 'GET' && method !== 'HEAD') {
    status = 405
    body = ''
  } else {
    try {
      store.cost(store.plan(new URLSearchParams(query)))
      body = answerToJson(await store.query(new URLSearchParams(query)))
      status = 200
    } catch (err) {
      if (!isPriceStoreError(err)) throw err
      status = 400
      body = JSON.stringify({ error: { code: err.code, message: err.message } })
    }
  }
  expect(answer.status, target).toBe(status)
  if (method === 'HEAD') expect(answer.body).toBe('')
  else if (body !== '') expect(answer.body).toBe(body)
  else expect(JSON.parse(answer.body).error.code).toBe(status === 404 ? 'HTTP_NOT_FOUND' : 'HTTP_METHOD_NOT_ALLOWED')
}

// ------------------------------------------------------------------- tests

describe('HTTP fuzzing: raw requests over real sockets (startServer, classic-level store)', () => {
  it('hostile requests: a JSON answer of the documented shape within 10 s, never a 5xx, and the server keeps serving', async () => {
    await fc.assert(
      fc.asyncProperty(requestArb, async (request) => {
        const bytes = serialize(request)
        const result = await exchange(server.url, bytes, { halfClose: request.halfClose, head: request.method === 'HEAD' })
        checkOutcome(result, { bytes, halfClose: request.halfClose }, [200, 400, 404, 405, 408, 431], 'hostile request')
        await checkStillServing(server.url, 200)
      }),
      { numRuns: 1500 },
    )
    expect(serverErrors).toEqual([])
    if (process.env.FUZZ_STATS) console.log(Object.fromEntries(reached), Object.fromEntries(shapes), [...refusing])
    // The fuzzer is not vacuous: it reached every outcome an open store can give.
    const keys = [...reached.keys()]
    for (const expected of ['200 ok', '200 HEAD', '400 HTTP_BAD_REQUEST', '404 HTTP_NOT_FOUND', '405 HTTP_METHOD_NOT_ALLOWED', '431 HTTP_HEADERS_TOO_LARGE']) {
      expect(keys, JSON.stringify(Object.fromEntries(reached))).toContain(expected)
    }
    expect(keys.filter((key) => /^400 PRICE_/.test(key)).length).toBeGreaterThanOrEqual(3)
  })

  it('well-formed requests: exactly the documented route and the store.plan, cost and query answer', async () => {
    const wellFormed = fc.record({
      method: fc.constantFrom('GET', 'GET', 'GET', 'HEAD', 'POST', 'DELETE', 'OPTIONS', 'PUT'),
      path: fc.constantFrom('/prices', '/prices/', '//prices', '/PRICES', '/%70rices', '/prices/x', '/x', 'http://127.0.0.1/prices', 'http://h/prices/'),
      query: fc.oneof(
        fc
          .array(fc.record({ name: fc.constantFrom(...KNOWN, 'pad'), value: valueArb, mode: fc.constantFrom<'encoded' | 'verbatim'>('encoded', 'verbatim') }), { maxLength: 6 })
          .map((params) => params.map((p) => `${encodeValue(p.name, p.mode)}=${encodeValue(p.value, p.mode)}`).join('&')),
        beyondTextArb,
      ),
      version: fc.constantFrom('HTTP/1.1', 'HTTP/1.0'),
    })
    await fc.assert(
      fc.asyncProperty(wellFormed, async ({ method, path, query, version }) => {
        await checkAgainstOracle(method, path, query, version)
      }),
      { numRuns: 300 },
    )
  })

  it('the forms beyond RedStone, valid and broken: exactly what store.plan, cost and query give, of a documented shape', async () => {
    shapes.clear()
    refusing.clear()
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('GET', 'GET', 'GET', 'HEAD'), fc.constantFrom('/prices', '/prices/'), beyondTextArb, async (method, path, query) => {
        await checkAgainstOracle(method, path, query, 'HTTP/1.1')
      }),
      { numRuns: 1_000 },
    )
    if (process.env.FUZZ_STATS) console.log(Object.fromEntries(shapes), [...refusing])
    // Not vacuous: every documented shape of answer, and a refusal naming each parameter beyond RedStone's.
    for (const shape of ['records', 'sampled', 'several', 'filled', 'candles', 'twap']) expect([...shapes.keys()], JSON.stringify(Object.fromEntries(shapes))).toContain(shape)
    expect([...refusing].sort()).toEqual([...BEYOND].sort())
  })

  it('examples fuzzing found or that Node answers on its own: all answered as JSON', async () => {
    const cases: [string, number, { halfClose?: boolean; head?: boolean }?][] = [
      // Node answers a missing Host with an empty 400 of its own; startServer answers it as JSON.
      ['GET /prices?symbol=BTC HTTP/1.1\r\n\r\n', 400],
      ['HEAD /prices?symbol=BTC HTTP/1.1\r\n\r\n', 400, { head: true }],
      // HTTP/1.0 needs no Host.
      ['GET /prices?symbol=BTC HTTP/1.0\r\n\r\n', 200],
      // An HTTP/0.9-style request line.
      ['GET /prices?symbol=BTC\r\n\r\n', 200],
      // Node answers an unknown Expect with an empty 417; it is ignored instead (RFC 9110 §10.1.1).
      ['GET /prices?symbol=BTC HTTP/1.1\r\nHost: x\r\nExpect: teapot\r\n\r\n', 200],
      ['GET /prices?symbol=BTC HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\nhi', 200],
      ['GET /prices?symbols=BTC,ETH HTTP/1.1\r\nHost: x\r\n\r\nGET /prices?symbol=ETH HTTP/1.1\r\nHost: x\r\n\r\n', 200],
      // A lying content-length on a GET: answered at once, without waiting for the body.
      ['GET /prices?symbol=BTC HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\nabc', 200],
      ['GET /prices?symbol=BTC HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab', 400],
      ['GET /prices?symbol=BTC HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nbogus\r\n', 400, { halfClose: true }],
      ['get /prices HTTP/1.1\r\nHost: x\r\n\r\n', 400],
      ['CONNECT /prices HTTP/1.1\r\nHost: x\r\n\r\n', 405],
      ['CONNECT 127.0.0.1:443 HTTP/1.1\r\nHost: x\r\n\r\n', 404],
      ['PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 400],
    ]
    for (const [text, status, options = {}] of cases) {
      const result = await exchange(server.url, text, options)
      expect(result.kind, text).toBe('answer')
      checkShape(result as RawAnswer, [status])
      await checkStillServing(server.url, 200)
    }
  })
})

describe('HTTP fuzzing: a closed store and a failing store', () => {
  it('a closed store: 503 PRICE_NOT_OPEN on /prices, the documented shape everywhere, via startServer and a bare node:http server', async () => {
    const closed = await PriceStore.open(join(dir, 'closed'), { provider: PROVIDER })
    await closed.close()
    const running = await startServer({ store: closed, chartScript, headersTimeoutMs: 1_500, requestTimeoutMs: 3_000 })
    // The embedding of docs/http.md: createPricesListener on a node:http server of your own.
    const bare: Server = createServer({ requireHostHeader: false, headersTimeout: 1_500, requestTimeout: 3_000, connectionsCheckingInterval: 200 }, createPricesListener(closed, { chartScript }))
    bare.on('clientError', answerClientError)
    bare.on('connect', answerConnect)
    bare.on('checkExpectation', (req, res) => bare.emit('request', req, res))
    await new Promise<void>((resolve) => bare.listen(0, '127.0.0.1', resolve))
    const bareUrl = `http://127.0.0.1:${(bare.address() as AddressInfo).port}`
    try {
      for (const url of [running.url, bareUrl]) {
        await fc.assert(
          fc.asyncProperty(requestArb, async (request) => {
            const bytes = serialize(request)
            const result = await exchange(url, bytes, { halfClose: request.halfClose, head: request.method === 'HEAD' })
            checkOutcome(result, { bytes, halfClose: request.halfClose }, [400, 404, 405, 408, 431, 503], 'closed store')
            if (result.kind === 'answer' && result.status === 503) {
              if (result.body !== '') expect(JSON.parse(result.body).error.code).toBe('PRICE_NOT_OPEN')
            }
            await checkStillServing(url, 503)
          }),
          { numRuns: 150 },
        )
      }
    } finally {
      await running.close()
      await new Promise<void>((resolve) => {
        bare.close(() => resolve())
        bare.closeAllConnections()
      })
    }
  })

  it('a store that fails: 500 only when the stub forces it, 503 for PRICE_NOT_OPEN, never a leak of what was thrown', async () => {
    const SERVER_CODES: PriceStoreErrorCode[] = ['PRICE_STORAGE_ERROR', 'PRICE_CORRUPT_VALUE', 'PRICE_UNSUPPORTED_FORMAT', 'PRICE_LOCKED', 'PRICE_INVALID_OPTIONS', 'PRICE_NOT_OPEN', 'PRICE_INVALID_QUERY']
    const failureArb = fc.oneof(
      fc.record({ kind: fc.constant('coded' as const), code: fc.constantFrom(...SERVER_CODES), secret: fc.string({ maxLength: 20 }) }),
      fc.record({ kind: fc.constantFrom('error' as const, 'sync' as const, 'value' as const), secret: fc.string({ maxLength: 20 }) }),
    )
    let failure: { kind: string; code?: PriceStoreErrorCode; secret: string } = { kind: 'error', secret: '' }
    const reported: unknown[] = []
    const stub = {
      query(): Promise<never> {
        const secret = `SECRET-${failure.secret}`
        if (failure.kind === 'sync') throw new Error(secret)
        // Not an Error at all.
        if (failure.kind === 'value') return Promise.reject({ message: secret })
        if (failure.kind === 'coded') return Promise.reject(new PriceStoreError(failure.code!, secret))
        return Promise.reject(new Error(secret))
      },
    }
    // Light and heavy queries of every form, so every path through the gate meets the failure.
    const stubQueryArb = fc.constantFrom(
      'symbol=BTC', 'symbols=A,B', '', 'symbol=BTC&interval=1&fromTimestamp=0&toTimestamp=1',
      'symbol=BTC&interval=1&fromTimestamp=0&toTimestamp=1&aggregate=candles&fill=prev', 'aggregate=twap&fromTimestamp=0&toTimestamp=1',
      'symbols=A,B&toTimestamp=1&direction=nearest&tolerance=5',
    )
    const running = await startServer({ store: stub, onError: (err) => reported.push(err) })
    try {
      await fc.assert(
        fc.asyncProperty(failureArb, fc.constantFrom('GET', 'HEAD'), stubQueryArb, async (chosen, method, query) => {
          failure = chosen
          reported.length = 0
          const result = await exchange(running.url, `${method} /prices?${query} HTTP/1.1\r\nHost: x\r\n\r\n`, { head: method === 'HEAD' })
          expect(result.kind).toBe('answer')
          const answer = result as RawAnswer
          checkShape(answer, [400, 500, 503])
          const expected = chosen.kind !== 'coded' ? 500 : chosen.code === 'PRICE_NOT_OPEN' ? 503 : chosen.code === 'PRICE_INVALID_QUERY' ? 400 : 500
          expect(answer.status).toBe(expected)
          if (expected !== 400) {
            expect(answer.body).not.toContain('SECRET-')
            expect(reported).toHaveLength(1)
          }
        }),
        { numRuns: 150 },
      )
    } finally {
      await running.close()
    }
  })
})
