import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { MemoryLevel } from 'memory-level'
import { parse } from 'yaml'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type RunningServer } from '../../src/adapters/http/node.js'
import { PriceStore } from '../../src/index.js'
import type { DemoRecord } from '../../src/demo/demo-data.js'
import { PROVIDER, newestFirst, openDemoStore, parseRawResponse, rawRequest, serve } from './helpers.js'
import { checkSchema, resolveRef } from './schema-check.js'

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

async function check(method: 'GET' | 'HEAD' | 'POST' | 'OPTIONS' | 'DELETE', target: string, expectedStatus: number, base = server.url): Promise<void> {
  const response = await fetch(`${base}${target}`, { method })
  const body = await response.text()
  expect(response.status, target).toBe(expectedStatus)
  const headers = Object.fromEntries(response.headers.entries())
  const operation = method === 'HEAD' ? 'head' : 'get'
  const path = new URL(target, base).pathname
  // `/prices/` is `/prices`; answers every path shares (404, 405) are documented once, on /prices.
  const documented = doc.paths[path]?.[operation]?.responses?.[String(response.status)] !== undefined
  conforms(operation, response.status, headers, body, documented ? path : '/prices')
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

  it('documents exactly the parameters the engine knows, in its order', () => {
    for (const method of ['get', 'head']) {
      const names = doc.paths['/prices'][method].parameters.map((parameter: unknown) => deref(parameter).name)
      expect(names).toEqual(['symbol', 'symbols', 'provider', 'limit', 'offset', 'fromTimestamp', 'toTimestamp', 'interval'])
    }
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
