/**
 * Fuzzing the live service's endpoints over real sockets: random methods,
 * paths, parameters, credentials and bodies sent to `POST /prices`,
 * `/prices/stream`, `/prices/export`, `/stats`, `/health` and `/metrics` of
 * one server with writes and metrics on. Every answer has a documented
 * status and shape, never a 5xx, never the token; the server keeps
 * serving; and the store ends up holding exactly the records of the writes
 * it acknowledged (refused bodies change nothing).
 */
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { DemoRecord } from '../../src/demo/demo-data.js'
import { demoRecords } from '../support/http/demo-server.js'
import { TOKEN, ndjson, startWriteServer, type WriteServer } from '../support/http/write-server.js'
import { exchange, type RawAnswer } from './http-raw.js'

/** The records the store starts with, and the pool valid writes draw from (not stored at first). */
const ALL = demoRecords()
const INITIAL = ALL.slice(0, 300)
const POOL = ALL.slice(300, 500)

const MAX_WRITE_BYTES = 16_384
/** The head of a live stream's 200 and its first event (the `retry` advice), as the first chunk of the body. */
const STREAM_OPENED = /^HTTP\/1\.1 200 OK\r\n[^]*content-type: text\/event-stream[^]*\r\n\r\n[0-9a-f]+\r\nretry: \d+\n/i
const STATUSES = [200, 400, 401, 403, 404, 405, 408, 413, 415]

let server: WriteServer
/** What the store must hold: every record stored, by key (a rewrite replaces). */
const model = new Map<string, DemoRecord>()
const keyOf = (record: { symbol: string; timestamp: number; id: string }): string => `${record.symbol}\u0000${record.timestamp}\u0000${record.id}`

beforeAll(async () => {
  server = await startWriteServer({ metrics: true, maxWriteBytes: MAX_WRITE_BYTES, writeBodyTimeoutMs: 2_000, headersTimeoutMs: 1_500, requestTimeoutMs: 3_000 })
  await server.store.putMany(INITIAL)
  for (const record of INITIAL) model.set(keyOf(record), record)
})

afterAll(async () => {
  await server?.close()
})

const hostileText = fc.oneof(
  fc.constantFrom('', ' ', 'BTC', 'BTC,ETH', 'ETH,,AR', '-1', '0', '1', '1e3', 'NaN', 'now', '2024-06-01', '2024-13-45T99:99Z', '%zz', '\u0000', 'a'.repeat(300)),
  fc.string({ maxLength: 12 }),
  fc.nat().map(String),
)
const paramArb = fc.tuple(fc.constantFrom('symbol', 'symbols', 'from', 'to', 'after', 'limit', 'x'), hostileText)
const queryArb = fc.array(paramArb, { maxLength: 4 }).map((params) => params.map(([name, value]) => `${name}=${encodeURIComponent(value)}`).join('&'))

const authArb = fc.constantFrom(`Bearer ${TOKEN}`, `Bearer ${TOKEN}`, `bearer ${TOKEN}`, `Bearer ${TOKEN}x`, `Bearer ${TOKEN.slice(1)}`, 'Bearer', 'Basic dXNlcjpwYXNz', `Token ${TOKEN}`, undefined)
const contentTypeArb = fc.constantFrom('application/x-ndjson', 'application/json', 'text/plain', 'application/json; charset=latin1', undefined)

/** A body and the records it writes if the server takes it (`undefined`: it must be refused). */
const bodyArb: fc.Arbitrary<{ readonly text: string; readonly records: readonly DemoRecord[] | undefined }> = fc.oneof(
  { weight: 4, arbitrary: fc.subarray(POOL, { minLength: 1, maxLength: 4 }).map((records) => ({ text: ndjson(records), records })) },
  { weight: 2, arbitrary: fc.subarray(POOL, { minLength: 1, maxLength: 4 }).map((records) => ({ text: JSON.stringify(records), records })) },
  {
    weight: 2,
    // One broken field in an otherwise good batch: the whole batch is refused.
    arbitrary: fc
      .tuple(fc.subarray(POOL, { minLength: 1, maxLength: 3 }), fc.constantFrom<[string, unknown]>(['value', 'abc'], ['timestamp', -1], ['symbol', ''], ['id', 7], ['signature', null]))
      .map(([records, [field, value]]) => ({ text: ndjson([...records, { ...POOL[0], [field]: value }]), records: undefined })),
  },
  { weight: 2, arbitrary: fc.string({ maxLength: 60 }).map((text) => ({ text, records: undefined })) },
  { weight: 1, arbitrary: fc.nat({ max: 3_000 }).map((depth) => ({ text: `${'['.repeat(depth)}${']'.repeat(depth)}`, records: undefined })) },
  { weight: 1, arbitrary: fc.constant({ text: ndjson(POOL).repeat(Math.ceil(MAX_WRITE_BYTES / ndjson(POOL).length) + 1), records: undefined }) },
  { weight: 1, arbitrary: fc.constantFrom('[]', '{}', 'null', '\n\n', '[1,2]', '{"symbol":"BTC"}').map((text) => ({ text, records: undefined })) },
)

const anyRequestArb = fc.record({
  method: fc.oneof({ weight: 6, arbitrary: fc.constantFrom('GET', 'HEAD', 'POST') }, { weight: 1, arbitrary: fc.constantFrom('PUT', 'DELETE', 'OPTIONS', 'PATCH') }),
  path: fc.constantFrom('/prices', '/prices/', '/prices/stream', '/prices/export', '/stats', '/health', '/metrics', '/prices/stream/', '/STATS', '/metrics/x'),
  // Often none, so that the endpoints that refuse unknown parameters (export) answer 200 too.
  query: fc.oneof({ weight: 1, arbitrary: fc.constant('') }, { weight: 2, arbitrary: queryArb }),
  authorization: authArb,
  contentType: contentTypeArb,
  lastEventId: fc.option(hostileText, { nil: undefined, freq: 4 }),
  body: bodyArb,
})

/** Writes, mostly with the token and the body's own content type, so that some are taken. */
const writeRequestArb = fc
  .record({
    path: fc.constantFrom('/prices', '/prices/'),
    query: fc.constantFrom('', 'symbol=BTC'),
    authorization: fc.oneof({ weight: 3, arbitrary: fc.constant(`Bearer ${TOKEN}`) }, { weight: 1, arbitrary: authArb }),
    ownType: fc.boolean(),
    contentType: contentTypeArb,
    body: bodyArb,
  })
  .map(({ ownType, contentType, body, ...rest }) => ({
    ...rest,
    method: 'POST' as const,
    lastEventId: undefined,
    body,
    contentType: ownType ? (body.text.startsWith('[') ? 'application/json' : 'application/x-ndjson') : contentType,
  }))

/**
 * Well-formed reads of each endpoint, so that every one's 200 is reached many
 * times in a run: hostile parameters alone reach a live stream's 200 only a
 * few times in 500 runs, and sometimes not at all.
 */
const wellFormedReadArb = fc
  .record({
    method: fc.constantFrom('GET', 'GET', 'HEAD'),
    target: fc.constantFrom(
      { path: '/prices/stream', query: '' },
      { path: '/prices/stream', query: 'symbol=BTC' },
      { path: '/prices/stream', query: 'symbols=BTC,ETH&after=0' },
      { path: '/prices/export', query: '' },
      { path: '/prices/export', query: 'symbols=BTC,ETH' },
      { path: '/stats', query: '' },
      { path: '/health', query: '' },
      { path: '/metrics', query: '' },
    ),
    authorization: authArb,
    lastEventId: fc.option(fc.nat({ max: 3 }).map(String), { nil: undefined }),
  })
  .map(({ method, target, authorization, lastEventId }) => ({
    method,
    ...target,
    authorization,
    contentType: undefined,
    lastEventId,
    body: { text: '', records: undefined },
  }))

const requestArb = fc.oneof({ weight: 4, arbitrary: anyRequestArb }, { weight: 4, arbitrary: writeRequestArb }, { weight: 1, arbitrary: wellFormedReadArb })

type FuzzRequest = typeof anyRequestArb extends fc.Arbitrary<infer T> ? T : never

function serialize(request: FuzzRequest): string {
  const target = request.query === '' ? request.path : `${request.path}?${request.query}`
  const body = request.method === 'POST' || request.method === 'PUT' ? request.body.text : ''
  const headers = [
    `${request.method} ${target} HTTP/1.1`,
    'Host: 127.0.0.1',
    ...(request.authorization === undefined ? [] : [`Authorization: ${request.authorization}`]),
    ...(request.contentType === undefined || body === '' ? [] : [`Content-Type: ${request.contentType}`]),
    ...(request.lastEventId === undefined ? [] : [`Last-Event-ID: ${request.lastEventId.replace(/[\r\n]/g, '')}`]),
    ...(body === '' ? [] : [`Content-Length: ${Buffer.byteLength(body)}`]),
  ]
  return `${headers.join('\r\n')}\r\n\r\n${body}`
}

/** Whether the server must take this write (right method, path, token and content type, a good batch within the limit). */
function mustStore(request: FuzzRequest): boolean {
  const typed = request.contentType === undefined || request.contentType === 'application/x-ndjson' || request.contentType === 'application/json'
  const token = request.authorization === `Bearer ${TOKEN}` || request.authorization === `bearer ${TOKEN}`
  return (
    request.method === 'POST' &&
    (request.path === '/prices' || request.path === '/prices/') &&
    token &&
    typed &&
    request.body.records !== undefined &&
    // A JSON array sent as NDJSON (and the reverse) is a malformed body.
    (request.contentType === undefined || (request.contentType === 'application/json') === request.body.text.startsWith('[')) &&
    Buffer.byteLength(request.body.text) <= MAX_WRITE_BYTES &&
    // A header value with a control character (NUL...) is a malformed request: Node's parser answers 400 before any endpoint.
    !HEADER_CONTROL.test(request.lastEventId ?? '')
  )
}

/** What RFC 9110 §5.5 leaves out of a field value (HTAB aside; CR and LF are cut by serialize). */
const HEADER_CONTROL = /[\u0000-\u0008\u000b-\u000c\u000e-\u001f\u007f]/

describe('HTTP fuzzing of the live endpoints (POST /prices, stream, export, stats, health, metrics)', () => {
  it('documented answers, never a 5xx or the token, the server keeps serving, and only acknowledged writes are stored', async () => {
    const reached = new Set<string>()
    await fc.assert(
      fc.asyncProperty(requestArb, async (request) => {
        const streaming = request.method === 'GET' && request.path === '/prices/stream'
        // An open live stream never ends by itself: its head and first event are all there is to read, so
        // the exchange stops as soon as they are in (or after a second, and the check below fails).
        const result = await exchange(server.url, serialize(request), {
          head: request.method === 'HEAD',
          timeoutMs: streaming ? 1_000 : 10_000,
          ...(streaming ? { until: (received: string) => STREAM_OPENED.test(received) } : {}),
        })
        if (result.kind !== 'answer') {
          expect(streaming, `${request.method} ${request.path}: ${result.kind} ${result.received.slice(0, 200)}`).toBe(true)
          expect(result.kind).toBe('open')
          expect(result.received).toMatch(STREAM_OPENED)
          reached.add('200 stream')
          return
        }
        const answer = result as RawAnswer
        expect(STATUSES, `${request.method} ${request.path}?${request.query}: ${answer.status} ${answer.body.slice(0, 300)}`).toContain(answer.status)
        expect(answer.body).not.toContain(TOKEN.slice(3))
        if (answer.status >= 400 && request.method !== 'HEAD') {
          expect(JSON.parse(answer.body)).toEqual({ error: expect.objectContaining({ code: expect.stringMatching(/^(PRICE|HTTP)_[A-Z_]+$/), message: expect.any(String) }) })
        }
        const write = request.method === 'POST' && (request.path === '/prices' || request.path === '/prices/')
        reached.add(`${answer.status} ${write ? 'write' : request.path}`)
        if (mustStore(request)) {
          expect(answer.status, answer.body).toBe(200)
          expect(JSON.parse(answer.body)).toMatchObject({ stored: request.body.records!.length })
          for (const record of request.body.records!) model.set(keyOf(record), record)
        } else if (request.method === 'POST' && answer.status === 200) {
          throw new Error(`a write that must be refused was taken: ${serialize(request).slice(0, 300)}`)
        }
      }),
      { numRuns: 500 },
    )
    const health = await exchange(server.url, 'GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n')
    expect((health as RawAnswer).status).toBe(200)
    expect(server.reported).toEqual([])
    // Refused bodies changed nothing and acknowledged ones are all there: the store holds the model exactly.
    const stored: string[] = []
    for await (const record of server.store.export()) stored.push(`${keyOf(record)}\u0000${record.value}`)
    const expected = [...model.values()].map((record) => `${keyOf(record)}\u0000${record.value}`)
    expect(stored.sort()).toEqual(expected.sort())
    // Not vacuous: writes were taken and refused, and every endpoint answered.
    for (const outcome of ['200 write', '400 write', '401 write', '403 write', '413 write', '415 write', '200 stream', '200 /prices/export', '200 /stats', '200 /health', '200 /metrics', '404 /STATS', '405 /health']) {
      expect([...reached], outcome).toContain(outcome)
    }
  }, 120_000)
})
