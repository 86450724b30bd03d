import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { MemoryLevel } from 'memory-level'
import { parse } from 'yaml'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type RunningServer } from '../../src/adapters/http/node.js'
import { PriceStore, type Candle, type FilledPoint, type RecordRef, type SampledRecord, type Twap } from '../../src/index.js'
import { generateDemoRecords, type DemoRecord } from '../../src/demo/demo-data.js'
import { KNOWN_PARAMETERS } from '../../src/engine/parse-query.js'
import { END, PROVIDER, TOKENS, newestFirst, openDemoStore, parseRawResponse, rawRequest, serve } from '../support/http/demo-server.js'
import { checkSchema, resolveRef } from '../support/http/schema-check.js'

// Real responses of a real server, checked against docs/openapi.yaml.

type Doc = Record<string, any>
let doc: Doc
let store: PriceStore
let records: DemoRecord[]
let server: RunningServer

beforeAll(async () => {
  doc = parse(await readFile(new URL('../../docs/openapi.yaml', import.meta.url), 'utf8')) as Doc
  ;({ store, records } = await openDemoStore())
  server = await serve(store)
})

afterAll(async () => {
  await server?.close()
  await store?.close()
})

function deref(node: any): any {
  return typeof node?.$ref === 'string' ? deref(resolveRef(doc, node.$ref)) : node
}

/** Checks one response against the documented response for `method path` (default `/prices`) and `status`. */
function conforms(method: 'get' | 'head', status: number, headers: Record<string, string | null>, body: string, path = '/prices'): void {
  const documented = deref(doc.paths[path][method].responses[String(status)])
  expect(documented, `status ${status} of ${method.toUpperCase()} is documented`).toBeDefined()
  for (const name of Object.keys(documented.headers ?? {})) expect(headers[name], `header ${name}`).toBeTruthy()
  if (method === 'head') {
    expect(body).toBe('')
    return
  }
  const contentType = headers['content-type']!
  const media = documented.content?.[contentType]
  expect(media, `content type ${contentType} is documented for ${status}`).toBeDefined()
  const errors = checkSchema(contentType.startsWith('application/json') ? JSON.parse(body) : body, media.schema, doc)
  expect(errors).toEqual([])
}

/** Sends one request and checks its answer against the documentation; returns the body. */
async function check(method: 'GET' | 'HEAD' | 'POST' | 'OPTIONS' | 'DELETE', target: string, expectedStatus: number, base = server.url): Promise<string> {
  const response = await fetch(`${base}${target}`, { method })
  const body = await response.text()
  expect(response.status, target).toBe(expectedStatus)
  const headers = Object.fromEntries(response.headers.entries())
  const operation = method === 'HEAD' ? 'head' : 'get'
  const path = new URL(target, base).pathname
  // `/prices/` is `/prices`; answers every path shares (404, 405) are documented once, on /prices.
  const documented = doc.paths[path]?.[operation]?.responses?.[String(response.status)] !== undefined
  conforms(operation, response.status, headers, body, documented ? path : '/prices')
  return body
}

describe('docs/openapi.yaml', () => {
  it('is OpenAPI 3.1 and every $ref resolves', () => {
    expect(doc.openapi).toMatch(/^3\.1\./)
    const refs: string[] = []
    const walk = (node: unknown): void => {
      if (Array.isArray(node)) node.forEach(walk)
      else if (typeof node === 'object' && node !== null) {
        for (const [key, value] of Object.entries(node)) {
          if (key === '$ref' && typeof value === 'string') refs.push(value)
          else walk(value)
        }
      }
    }
    walk(doc)
    expect(refs.length).toBeGreaterThan(10)
    for (const ref of refs) expect(() => resolveRef(doc, ref)).not.toThrow()
  })

  it('documents exactly the parameters the engine knows, in its order, for GET and HEAD alike', () => {
    const prices = doc.paths['/prices']
    const names = prices.parameters.map((parameter: unknown) => deref(parameter).name)
    // The engine's, then the adapter's own, which are not part of the query: `paginate` (the first page of a cursor walk,
    // page-answer.ts) and the read floor (docs/http.md, "Replicated nodes").
    expect(names).toEqual([...KNOWN_PARAMETERS, 'paginate', 'minPosition', 'x-min-position'])
    // Shared by the path, so neither operation may narrow or add its own.
    expect(prices.get.parameters).toBeUndefined()
    expect(prices.head.parameters).toBeUndefined()
  })

  it('every parameter example fits its schema; aggregate, fill and direction list the words the engine takes', () => {
    for (const parameter of doc.paths['/prices'].parameters.map(deref)) {
      if (parameter.example !== undefined) expect(checkSchema(parameter.example, parameter.schema, doc), parameter.name).toEqual([])
    }
    const words = (name: string) => deref({ $ref: `#/components/parameters/${name}` }).schema.enum
    expect(words('aggregate')).toEqual(['candles', 'twap'])
    expect(words('fill')).toEqual(['prev', 'none'])
    expect(words('direction')).toEqual(['before', 'after', 'nearest'])
  })

  it('the schema checker is not vacuous', () => {
    const recordSchema = { $ref: '#/components/schemas/PriceRecord' }
    const record = { ...records[0]!, providerPublicKey: PROVIDER.publicKey }
    expect(checkSchema(record, recordSchema, doc)).toEqual([])
    const { providerPublicKey: _dropped, ...missing } = record
    expect(checkSchema(missing, recordSchema, doc)).not.toEqual([])
    expect(checkSchema({ ...record, timestamp: 1.5 }, recordSchema, doc)).not.toEqual([])
    const errorSchema = { $ref: '#/components/schemas/ClientErrorBody' }
    expect(checkSchema({ error: { code: 'PRICE_INVALID_QUERY', message: 'x', stack: 'y' } }, errorSchema, doc)).not.toEqual([])
    expect(checkSchema({ error: { code: 'SOMETHING', message: 'x' } }, errorSchema, doc)).not.toEqual([])
    const udfError = { $ref: '#/components/schemas/UdfErrorBody' }
    expect(checkSchema({ s: 'error', errmsg: 'x', error: { code: 'PRICE_INVALID_QUERY', message: 'x' } }, udfError, doc)).toEqual([])
    expect(checkSchema({ error: { code: 'PRICE_INVALID_QUERY', message: 'x' } }, udfError, doc)).not.toEqual([])
    expect(checkSchema({ s: 'ok', t: [1], o: [1], h: [1], l: [1], c: [1], v: [0] }, { $ref: '#/components/schemas/UdfBars' }, doc)).not.toEqual([])
    expect(checkSchema([{ ...record, minutes: 60 }], { $ref: '#/components/schemas/SampledRecord/allOf/1/properties/minutes' }, doc)).not.toEqual([])
  })

  it('the schemas of the forms beyond RedStone refuse what the engine never answers', () => {
    const schema = (name: string) => ({ $ref: `#/components/schemas/${name}` })
    const ref = { id: 'a', timestamp: 1000, value: 1.5 }
    const candle = { bucket: 0, open: ref, high: ref, low: ref, close: ref, count: 1 }
    const carried = { ...candle, count: 0, carried: true, age: 5 }
    expect(checkSchema(candle, schema('Candle'), doc)).toEqual([])
    expect(checkSchema(carried, schema('Candle'), doc)).toEqual([])
    expect(checkSchema({ ...candle, bucket: -700 }, schema('Candle'), doc)).toEqual([])
    expect(checkSchema({ ...candle, carried: true }, schema('Candle'), doc)).not.toEqual([]) // carried needs age
    expect(checkSchema({ ...candle, age: 5 }, schema('Candle'), doc)).not.toEqual([]) // age needs carried
    expect(checkSchema({ ...carried, carried: false }, schema('Candle'), doc)).not.toEqual([])
    expect(checkSchema({ ...candle, open: { ...ref, symbol: 'BTC' } }, schema('Candle'), doc)).not.toEqual([])
    expect(checkSchema({ ...candle, volume: 1 }, schema('Candle'), doc)).not.toEqual([])
    const { close: _close, ...noClose } = candle
    expect(checkSchema(noClose, schema('Candle'), doc)).not.toEqual([])

    const sampled = { ...records[0]!, providerPublicKey: PROVIDER.publicKey, minutes: 0 }
    const point = { bucket: 0, carried: false, age: 0, record: sampled }
    expect(checkSchema(point, schema('FilledPoint'), doc)).toEqual([])
    const { minutes: _minutes, ...unsampled } = sampled
    expect(checkSchema({ ...point, record: unsampled }, schema('FilledPoint'), doc)).not.toEqual([])
    expect(checkSchema({ ...point, record: ref }, schema('FilledPoint'), doc)).not.toEqual([])
    expect(checkSchema({ ...point, age: -1 }, schema('FilledPoint'), doc)).not.toEqual([])
    const { carried: _carried, ...noCarried } = point
    expect(checkSchema(noCarried, schema('FilledPoint'), doc)).not.toEqual([])

    const twap = { twap: 1.5, from: 0, to: 10, start: 0, count: 1, first: ref, last: ref }
    expect(checkSchema(twap, schema('Twap'), doc)).toEqual([])
    expect(checkSchema({ ...twap, count: 0 }, schema('Twap'), doc)).not.toEqual([])
    expect(checkSchema({ ...twap, symbol: 'BTC' }, schema('Twap'), doc)).not.toEqual([])
    expect(checkSchema({ ...twap, last: sampled }, schema('Twap'), doc)).not.toEqual([])

    // The answer as a whole: each shape is one of the documented variants, and none passes for another.
    const answer = schema('PriceAnswer')
    for (const good of [[candle, carried], [point], { BTC: twap }, [sampled], { BTC: sampled }]) expect(checkSchema(good, answer, doc)).toEqual([])
    for (const bad of [[candle, point], [twap], { BTC: candle }, { BTC: point }, [{ ...point, record: ref }]]) expect(checkSchema(bad, answer, doc)).not.toEqual([])
  })

  it('the examples of the answer fit its schema and are the real answers on the demo data set of `npm start`', async () => {
    const media = deref(doc.paths['/prices'].get.responses['200']).content['application/json; charset=utf-8']
    const examples = Object.entries(media.examples as Record<string, { description: string; value: unknown }>)
    expect(examples.map(([name]) => name)).toEqual(['candles', 'twap'])
    const queries = examples.map(([name, example]) => {
      expect(checkSchema(example.value, media.schema, doc), name).toEqual([])
      const query = /`GET \/prices\?([^`]+)`/.exec(example.description)?.[1]
      expect(query, `${name} names its query`).toBeDefined()
      return new URLSearchParams(query)
    })
    // The demo data set (as `npm start` writes it), of the symbols the examples ask for.
    const symbols = new Set(queries.flatMap((query) => [query.get('symbol') ?? [], query.get('symbols')?.split(',') ?? []].flat()))
    const demo = await PriceStore.open(new MemoryLevel(), { provider: PROVIDER })
    try {
      let batch: DemoRecord[] = []
      // Unsigned: the same records but for their signature, which no example shows (signing them all takes ~25 s).
      for (const record of generateDemoRecords({ providerId: PROVIDER.id, signed: false })) {
        if (symbols.has(record.symbol)) batch.push(record)
        if (batch.length === 10_000) {
          await demo.putMany(batch)
          batch = []
        }
      }
      await demo.putMany(batch)
      for (const [i, [name, example]] of examples.entries()) expect(await demo.query(queries[i]!), name).toEqual(example.value)
    } finally {
      await demo.close()
    }
  }, 60_000)
})

describe('real responses conform to docs/openapi.yaml', () => {
  it('200 for every query form, GET and HEAD', async () => {
    const eth = newestFirst(records, 'ETH')
    const from = eth.at(-1)!.timestamp
    const to = eth[0]!.timestamp
    const targets = [
      '/prices?symbol=BTC',
      '/prices?symbol=BTC&limit=10&offset=3',
      `/prices?symbol=ETH&toTimestamp=${eth[40]!.timestamp}`,
      `/prices?symbol=ETH&fromTimestamp=${from}&toTimestamp=${to}&limit=50`,
      `/prices?symbol=ETH&fromTimestamp=${from}&toTimestamp=${to}&interval=60000`,
      `/prices?symbol=ETH&fromTimestamp=${from}&toTimestamp=${to}&interval=60000&offset=5&limit=7`,
      '/prices?symbols=BTC,ETH,AR',
      `/prices?symbols=BTC,ETH&toTimestamp=${eth[40]!.timestamp}`,
      '/prices',
      '/prices/',
      '/prices?symbol=NOPE',
      '/prices?symbols=NOPE',
    ]
    for (const target of targets) {
      await check('GET', target, 200)
      await check('HEAD', target, 200)
    }
  })

  it('400, 404, 405 and their bodies', async () => {
    for (const query of ['symbol=', 'limit=x&symbol=BTC', 'symbol=BTC&fromTimestamp=9&toTimestamp=1', 'interval=5', 'provider=x', 'symbol=A&symbols=B']) {
      await check('GET', `/prices?${query}`, 400)
      await check('HEAD', `/prices?${query}`, 400)
    }
    await check('GET', '/elsewhere', 404)
    await check('POST', '/prices', 405)
    await check('OPTIONS', '/prices', 405)
    await check('DELETE', '/prices/', 405)
  })

  it('400 from the parser and 431 for an oversized request', async () => {
    const bad = parseRawResponse((await rawRequest(server.url, 'GET /a b c HTTP/1.1\r\n\r\n')).response)
    conforms('get', bad.status, bad.headers, bad.body)
    const huge = await fetch(`${server.url}/prices?pad=${'x'.repeat(20_000)}`)
    expect(huge.status).toBe(431)
    conforms('get', 431, Object.fromEntries(huge.headers.entries()), await huge.text())
  })

  it('503 and 500', async () => {
    const closed = await PriceStore.open(new MemoryLevel(), { provider: PROVIDER })
    await closed.close()
    const notOpen = await serve(closed)
    const broken = await serve({ query: async () => Promise.reject(new Error('boom')) })
    try {
      await check('GET', '/prices?symbol=BTC', 503, notOpen.url)
      await check('HEAD', '/prices?symbol=BTC', 503, notOpen.url)
      await check('GET', '/udf/history?symbol=BTC&resolution=5&from=0&to=600', 503, notOpen.url)
      await check('GET', '/prices?symbol=BTC', 500, broken.url)
    } finally {
      await notOpen.close()
      await broken.close()
    }
  })
})

// ------------------------------------------------- the forms beyond RedStone's

const HOUR = 3_600_000
/** The demo data's first millisecond: records every 10 s from START to END (not included). */
const START = END - 2 * HOUR

/** The variants of the documented answer, each by the schema of its items. */
const VARIANTS = {
  records: { type: 'array', items: { $ref: '#/components/schemas/PriceRecord' } },
  sampled: { type: 'array', items: { $ref: '#/components/schemas/SampledRecord' } },
  filled: { type: 'array', items: { $ref: '#/components/schemas/FilledPoint' } },
  candles: { type: 'array', items: { $ref: '#/components/schemas/Candle' } },
  several: { type: 'object', additionalProperties: { $ref: '#/components/schemas/PriceRecord' } },
  twap: { type: 'object', additionalProperties: { $ref: '#/components/schemas/Twap' } },
} as const

/**
 * GETs a query of `/prices` (and HEADs it): both answers must conform to the
 * documented response, and the body to the one variant named. Returns the body.
 */
async function form<T>(query: string, variant: keyof typeof VARIANTS): Promise<T> {
  const body = JSON.parse(await check('GET', `/prices?${query}`, 200)) as T
  await check('HEAD', `/prices?${query}`, 200)
  expect(checkSchema(body, VARIANTS[variant], doc), query).toEqual([])
  return body
}

/** A `RecordRef` names a stored record: that id, at that timestamp, with that value. */
function expectNamesRecord(ref: RecordRef, symbol: string): void {
  const record = records.find((candidate) => candidate.id === ref.id)
  expect(record, `${symbol} ${ref.id}`).toBeDefined()
  expect({ symbol: record!.symbol, id: record!.id, timestamp: record!.timestamp, value: record!.value }).toEqual({ symbol, ...ref })
}

/** The last millisecond of the bucket starting at `bucket`, clipped to `to`. */
const bucketEnd = (bucket: number, interval: number, to: number) => Math.min(bucket + interval - 1, to)

/** What a candle's prices must be: inside its bucket (a carried one: before it), named records, high and low the extremes. */
function expectCandle(candle: Candle, symbol: string, interval: number, to: number): void {
  for (const ref of [candle.open, candle.high, candle.low, candle.close]) expectNamesRecord(ref, symbol)
  expect(candle.high.value).toBeGreaterThanOrEqual(Math.max(candle.open.value, candle.close.value, candle.low.value))
  expect(candle.low.value).toBeLessThanOrEqual(Math.min(candle.open.value, candle.close.value))
  if (candle.carried === true) {
    expect(candle.count).toBe(0)
    expect([candle.open, candle.high, candle.low]).toEqual([candle.close, candle.close, candle.close])
    expect(candle.close.timestamp).toBeLessThan(candle.bucket)
    expect(candle.age).toBe(bucketEnd(candle.bucket, interval, to) - candle.close.timestamp)
  } else {
    expect(candle.count).toBeGreaterThanOrEqual(1)
    expect(candle.open.timestamp).toBeGreaterThanOrEqual(candle.bucket)
    expect(candle.close.timestamp).toBeLessThanOrEqual(bucketEnd(candle.bucket, interval, to))
    expect(candle.open.timestamp).toBeLessThanOrEqual(candle.close.timestamp)
  }
}

describe('the forms beyond RedStone: real answers conform to docs/openapi.yaml', () => {
  it('the documented answer has a variant for each new shape', () => {
    const variants = doc.components.schemas.PriceAnswer.anyOf
    for (const shape of Object.values(VARIANTS)) expect(variants).toContainEqual(expect.objectContaining(shape))
  })

  it('candles (aggregate=candles), with offset and limit', async () => {
    const interval = 10 * 60_000
    const query = `symbol=ETH&fromTimestamp=${START}&toTimestamp=${END}&interval=${interval}&aggregate=candles`
    const candles = await form<Candle[]>(query, 'candles')
    // The bucket starting at END (toTimestamp) holds no record: no candle.
    expect(candles.map((candle) => candle.bucket)).toEqual(Array.from({ length: 12 }, (_, i) => START + i * interval))
    for (const candle of candles) {
      expectCandle(candle, 'ETH', interval, END)
      expect(candle.carried).toBeUndefined()
    }
    expect(candles.reduce((sum, candle) => sum + candle.count, 0)).toBe(newestFirst(records, 'ETH').length)
    expect(await form<Candle[]>(`${query}&offset=3&limit=2`, 'candles')).toEqual(candles.slice(3, 5))
  })

  it('candles with fill=prev: flat carried candles past the data, marked with carried and age; maxAge and origin', async () => {
    const interval = HOUR
    const to = END + 3 * HOUR
    const query = `symbol=BTC&fromTimestamp=${START}&toTimestamp=${to}&interval=${interval}&aggregate=candles&fill=prev`
    const candles = await form<Candle[]>(query, 'candles')
    expect(candles.map((candle) => [candle.bucket, candle.carried ?? false])).toEqual([
      [START, false], [START + HOUR, false], [END, true], [END + HOUR, true], [END + 2 * HOUR, true], [to, true],
    ])
    for (const candle of candles) expectCandle(candle, 'BTC', interval, to)
    // Carried for at most 90 minutes: only the first bucket past the data.
    const bounded = await form<Candle[]>(`${query}&maxAge=${1.5 * HOUR}`, 'candles')
    expect(bounded).toEqual(candles.slice(0, 3))
    // Buckets from half past each hour (-90 min is +30 min, modulo the interval); the first starts before fromTimestamp.
    const shifted = await form<Candle[]>(`${query}&origin=-${1.5 * HOUR}`, 'candles')
    expect(shifted.map((candle) => [candle.bucket, candle.carried ?? false])).toEqual([
      [START - HOUR / 2, false], [START + HOUR / 2, false], [END - HOUR / 2, false], [END + HOUR / 2, true], [END + 1.5 * HOUR, true], [END + 2.5 * HOUR, true],
    ])
    for (const candle of shifted) expectCandle(candle, 'BTC', interval, to)
    expect(shifted[0]!.open.timestamp).toBeGreaterThanOrEqual(START)
  })

  it('the range form with fill=prev and maxAge: FilledPoints, carried ones past the data, none past maxAge', async () => {
    const interval = 30 * 60_000
    const from = END - HOUR
    const to = END + 3 * HOUR
    const query = `symbol=AR&fromTimestamp=${from}&toTimestamp=${to}&interval=${interval}&fill=prev`
    const points = await form<FilledPoint[]>(query, 'filled')
    expect(points.map((point) => [point.bucket, point.carried])).toEqual(
      // The last bucket starts at toTimestamp and is one millisecond long.
      Array.from({ length: 9 }, (_, i) => [from + i * interval, from + i * interval >= END]),
    )
    const last = newestFirst(records, 'AR')[0]!
    for (const point of points) {
      expect(point.record.symbol).toBe('AR')
      expect(point.age).toBe(bucketEnd(point.bucket, interval, to) - point.record.timestamp)
      if (point.carried) expect(point.record.id).toBe(last.id)
      else expect(point.record.timestamp).toBeGreaterThanOrEqual(point.bucket)
    }
    // The range form's record of a bucket with records is the same with or without fill.
    const plain = await form<SampledRecord[]>(query.replace('&fill=prev', ''), 'sampled')
    expect(points.filter((point) => !point.carried).map((point) => point.record)).toEqual(plain)
    const maxAge = HOUR
    const bounded = await form<FilledPoint[]>(`${query}&maxAge=${maxAge}`, 'filled')
    expect(bounded).toEqual(points.filter((point) => !point.carried || point.age <= maxAge))
    expect(bounded.length).toBeLessThan(points.length)
    // Before the symbol's first record there is nothing to carry: those buckets are left out.
    const early = await form<FilledPoint[]>(`symbol=AR&fromTimestamp=${START - 3 * HOUR}&toTimestamp=${START + HOUR}&interval=${interval}&fill=prev`, 'filled')
    expect(early.map((point) => point.bucket)).toEqual([START, START + interval, START + 2 * interval])
  })

  it('origin shifts the range form\'s buckets; a shift by whole intervals changes nothing', async () => {
    const query = `symbol=BTC&fromTimestamp=${START}&toTimestamp=${END}&interval=${HOUR}`
    const shifted = await form<SampledRecord[]>(`${query}&origin=${HOUR / 4}`, 'sampled')
    // Buckets [START - 45 min, START + 15 min), [START + 15 min, +75 min), [+75 min, END + 15 min).
    expect(shifted).toHaveLength(3)
    expect(shifted[0]!.timestamp).toBeLessThan(START + HOUR / 4)
    expect(shifted[2]!.id).toBe(newestFirst(records, 'BTC')[0]!.id)
    expect(await form(`${query}&origin=${HOUR / 4 - 5 * HOUR}`, 'sampled')).toEqual(shifted)
    expect(await form(`${query}&origin=0`, 'sampled')).toEqual(await form(query, 'sampled'))
  })

  it('as-of lookups with direction and tolerance keep the history and several-tokens shapes', async () => {
    const eth = newestFirst(records, 'ETH')
    const [later, earlier] = [eth[40]!, eth[41]!]
    // A time 1 ms nearer the later record than the earlier one.
    const between = Math.floor((earlier.timestamp + later.timestamp) / 2) + 1
    const idsOf = (answer: DemoRecord[]) => answer.map((record) => record.id)
    expect(idsOf(await form<DemoRecord[]>(`symbol=ETH&toTimestamp=${between}`, 'records'))).toEqual([earlier.id])
    expect(idsOf(await form<DemoRecord[]>(`symbol=ETH&toTimestamp=${between}&direction=nearest`, 'records'))).toEqual([later.id])
    expect(idsOf(await form<DemoRecord[]>(`symbol=ETH&toTimestamp=${between}&direction=after&limit=1&offset=0`, 'records'))).toEqual([later.id])
    const reach = later.timestamp - between
    expect(idsOf(await form<DemoRecord[]>(`symbol=ETH&toTimestamp=${between}&direction=after&tolerance=${reach}`, 'records'))).toEqual([later.id])
    expect(await form(`symbol=ETH&toTimestamp=${between}&direction=after&tolerance=${reach - 1}`, 'records')).toEqual([])
    expect(await form(`symbol=ETH&toTimestamp=${between}&direction=before&tolerance=${reach - 1}`, 'records')).toEqual([])
    expect(await form(`symbol=NOPE&toTimestamp=${between}&direction=nearest`, 'records')).toEqual([])

    const several = await form<Record<string, DemoRecord>>(`symbols=BTC,ETH,NOPE&toTimestamp=${between}&direction=nearest&tolerance=10000`, 'several')
    expect(Object.keys(several)).toEqual(['BTC', 'ETH'])
    expect(several.ETH!.id).toBe(later.id)
    const all = await form<Record<string, DemoRecord>>(`toTimestamp=${between}&direction=after`, 'several')
    expect(Object.keys(all).sort()).toEqual(TOKENS.map((token) => token.symbol).sort())
    for (const record of Object.values(all)) expect(record.timestamp).toBe(later.timestamp) // the demo's tokens share each tick
    expect(await form(`toTimestamp=${END}&direction=after`, 'several')).toEqual({})
  })

  it('TWAP (aggregate=twap) for one symbol, several and all: one Twap per symbol with a record in force', async () => {
    const from = START + HOUR / 2
    const window = `fromTimestamp=${from}&toTimestamp=${END}&aggregate=twap`
    const one = await form<Record<string, Twap>>(`symbol=ETH&${window}`, 'twap')
    expect(Object.keys(one)).toEqual(['ETH'])
    const eth = one.ETH!
    const inWindow = newestFirst(records, 'ETH').filter((record) => record.timestamp <= END && record.timestamp > from)
    expect(eth).toMatchObject({ from, to: END, start: from, count: inWindow.length + 1 })
    expectNamesRecord(eth.first, 'ETH')
    expectNamesRecord(eth.last, 'ETH')
    expect(eth.first.timestamp).toBeLessThanOrEqual(from)
    expect(eth.last.id).toBe(inWindow[0]!.id)
    const values = [eth.first, ...inWindow].map((record) => record.value)
    expect(eth.twap).toBeGreaterThanOrEqual(Math.min(...values))
    expect(eth.twap).toBeLessThanOrEqual(Math.max(...values))

    const several = await form<Record<string, Twap>>(`symbols=ETH,NOPE,BTC&${window}`, 'twap')
    expect(Object.keys(several)).toEqual(['ETH', 'BTC'])
    expect(several.ETH).toEqual(eth)
    const all = await form<Record<string, Twap>>(window, 'twap')
    expect(Object.keys(all).sort()).toEqual(TOKENS.map((token) => token.symbol).sort())
    expect(all.BTC).toEqual(several.BTC)
    // Before the data, nothing is in force; at one instant, the value in force then.
    expect(await form(`fromTimestamp=0&toTimestamp=${START - 1}&aggregate=twap`, 'twap')).toEqual({})
    const instant = await form<Record<string, Twap>>(`symbol=ETH&fromTimestamp=${END}&toTimestamp=${END}&aggregate=twap`, 'twap')
    expect(instant.ETH).toMatchObject({ twap: inWindow[0]!.value, from: END, to: END, start: END, count: 1 })
    // A window that starts before the first record starts at it.
    const early = await form<Record<string, Twap>>(`symbol=ETH&fromTimestamp=0&toTimestamp=${END}&aggregate=twap`, 'twap')
    expect(early.ETH!.start).toBe(early.ETH!.first.timestamp)
    expect(early.ETH!.first.timestamp).toBeGreaterThanOrEqual(START)
  })

  it.each([
    ['aggregate=ohlc&symbol=BTC', 'PRICE_INVALID_QUERY', 'aggregate'],
    [`aggregate=candles&symbols=BTC&fromTimestamp=${START}&toTimestamp=${END}&interval=60000`, 'PRICE_INVALID_QUERY', 'aggregate'],
    [`aggregate=candles&symbol=BTC&fromTimestamp=${START}&toTimestamp=${END}`, 'PRICE_INVALID_INTERVAL', 'interval'],
    [`aggregate=candles&symbol=BTC&fromTimestamp=${START}&interval=60000`, 'PRICE_INVALID_RANGE', 'toTimestamp'],
    [`aggregate=twap&symbol=BTC&fromTimestamp=${START}&toTimestamp=${END}&interval=60000`, 'PRICE_INVALID_INTERVAL', 'interval'],
    [`aggregate=twap&symbols=BTC,ETH&toTimestamp=${END}`, 'PRICE_INVALID_RANGE', 'fromTimestamp'],
    [`aggregate=twap&fromTimestamp=${END}&toTimestamp=${START}`, 'PRICE_INVALID_RANGE', 'fromTimestamp'],
    [`aggregate=twap&fromTimestamp=${START}&toTimestamp=${END}&aggregate=candles`, 'PRICE_INVALID_QUERY', 'aggregate'],
    ['symbol=BTC&fill=prev', 'PRICE_INVALID_QUERY', 'fill'],
    [`symbol=BTC&fromTimestamp=${START}&toTimestamp=${END}&interval=${HOUR}&fill=next`, 'PRICE_INVALID_QUERY', 'fill'],
    [`symbol=BTC&fromTimestamp=${START}&toTimestamp=${END}&interval=${HOUR}&maxAge=60000`, 'PRICE_INVALID_QUERY', 'maxAge'],
    [`symbol=BTC&fromTimestamp=${START}&toTimestamp=${END}&interval=${HOUR}&fill=prev&maxAge=-1`, 'PRICE_INVALID_QUERY', 'maxAge'],
    [`symbol=BTC&toTimestamp=${END}&origin=0`, 'PRICE_INVALID_INTERVAL', 'origin'],
    [`symbol=BTC&fromTimestamp=${START}&toTimestamp=${END}&interval=${HOUR}&origin=1.5`, 'PRICE_INVALID_INTERVAL', 'origin'],
    [`symbol=BTC&fromTimestamp=${START}&toTimestamp=${END}&interval=${HOUR}&origin=--5`, 'PRICE_INVALID_INTERVAL', 'origin'],
    ['symbol=BTC&direction=nearest', 'PRICE_INVALID_QUERY', 'toTimestamp'],
    [`symbol=BTC&fromTimestamp=${START}&toTimestamp=${END}&direction=after`, 'PRICE_INVALID_QUERY', 'fromTimestamp'],
    [`symbol=BTC&toTimestamp=${END}&direction=after&limit=5`, 'PRICE_INVALID_QUERY', 'limit'],
    [`symbols=BTC,ETH&toTimestamp=${END}&tolerance=10&offset=1`, 'PRICE_INVALID_QUERY', 'offset'],
    [`symbol=BTC&toTimestamp=${END}&direction=sideways`, 'PRICE_INVALID_QUERY', 'direction'],
    [`symbol=BTC&toTimestamp=${END}&direction=after&direction=before`, 'PRICE_INVALID_QUERY', 'direction'],
    [`symbol=BTC&toTimestamp=${END}&tolerance=1e3`, 'PRICE_INVALID_QUERY', 'tolerance'],
    [`symbol=BTC&fromTimestamp=${START}&toTimestamp=${END}&interval=${HOUR}&tolerance=5`, 'PRICE_INVALID_QUERY', 'tolerance'],
    [`aggregate=twap&fromTimestamp=${START}&toTimestamp=${END}&direction=after`, 'PRICE_INVALID_QUERY', 'direction'],
    [`symbol=BTC&fromTimestamp=0&toTimestamp=${END}&interval=1&fill=prev`, 'PRICE_RANGE_TOO_LARGE', 'maxRangePoints'],
  ])('400 for %s: %s naming %s, in the documented error body', async (query, code, parameter) => {
    const body = JSON.parse(await check('GET', `/prices?${query}`, 400)) as { error: { code: string; message: string } }
    await check('HEAD', `/prices?${query}`, 400)
    expect(body.error.code).toBe(code)
    expect(body.error.message).toContain(parameter)
  })
})

describe('the UDF endpoints and the chart page conform to docs/openapi.yaml', () => {
  it('200, 400, 404 and no_data from /udf/*', async () => {
    const end = 1_717_200_000
    for (const target of [
      '/udf/config',
      '/udf/symbols?symbol=BTC',
      '/udf/search?query=eth&type=&exchange=&limit=5',
      '/udf/search',
      `/udf/history?symbol=ETH&resolution=5&from=${end - 3600}&to=${end}`,
      `/udf/history?symbol=ETH&resolution=1D&to=${end}&countback=2`,
      `/udf/history?symbol=ETH&resolution=60&from=${end + 3600}&to=${end + 7200}`,
      '/udf/history?symbol=ETH&resolution=60&from=0&to=3600',
      '/udf/time',
    ]) {
      await check('GET', target, 200)
    }
    for (const target of ['/udf/symbols?symbol=', '/udf/search?limit=0', '/udf/history?symbol=ETH&resolution=7&from=1&to=2', '/udf/history?symbol=ETH&resolution=5&from=3&to=2']) {
      await check('GET', target, 400)
    }
    await check('GET', '/udf/symbols?symbol=NOPE', 404)
    await check('GET', '/udf/nope', 404)
    await check('POST', '/udf/history', 405)
  })

  it('the page and its script: 200 when built, 503 HTTP_PAGE_NOT_BUILT when not', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'price-store-openapi-page-'))
    const script = join(dir, 'chart.js')
    await writeFile(script, '/* stand-in */\n')
    const built = await startServer({ store, chartScript: script })
    const unbuilt = await startServer({ store, chartScript: join(dir, 'missing.js') })
    try {
      await check('GET', '/', 200, built.url)
      await check('GET', '/page/chart.js', 200, built.url)
      await check('GET', '/', 503, unbuilt.url)
      await check('GET', '/page/chart.js', 503, unbuilt.url)
    } finally {
      await built.close()
      await unbuilt.close()
      await rm(dir, { recursive: true, force: true })
    }
  })
})
