/**
 * `fields` over HTTP: GET /prices (every form, a streamed long answer
 * included) and GET /prices/export against a real store served by
 * startServer. Each selected answer is checked against the whole answer
 * with the other keys taken out, byte for byte.
 */
import { MemoryLevel } from 'memory-level'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type RunningServer } from '../../../src/adapters/http/node.js'
import { PriceStore } from '../../../src/index.js'
import { T0, TEST_PROVIDER, makeRecord } from '../../../src/testing/records.js'
import { openSse } from '../../support/http/sse-client.js'

const SECOND = 1_000
const MINUTE = 60_000
/** 600 records per symbol, one a second: a range with interval=1000 is longer than the handler streams whole (256). */
const COUNT = 600

let store: PriceStore
let server: RunningServer
const errors: unknown[] = []

beforeAll(async () => {
  store = await PriceStore.open(new MemoryLevel(), { provider: TEST_PROVIDER })
  for (const symbol of ['BTC', 'ETH']) {
    await store.putMany(Array.from({ length: COUNT }, (_, i) => makeRecord({ symbol, timestamp: T0 + i * SECOND, ...(i === 7 ? { evmSignature: '0xabc' } : {}) })))
  }
  server = await startServer({ store, onError: (err) => errors.push(err) })
})

afterAll(async () => {
  await server?.close()
  await store?.close()
  expect(errors).toEqual([])
})

async function get(search: string): Promise<{ status: number; body: string; headers: Headers }> {
  const response = await fetch(`${server.url}/prices?${search}`)
  return { status: response.status, body: await response.text(), headers: response.headers }
}

/** Every object that stands for a record in a parsed answer, with the keys `drop` says go taken out (its other keys in order). */
function stripped(answer: unknown, drop: (key: string) => boolean): unknown {
  const strip = (record: Record<string, unknown>) => Object.fromEntries(Object.entries(record).filter(([key]) => !drop(key)))
  const item = (value: Record<string, unknown>): unknown => {
    if ('open' in value) return { ...value, open: strip(value['open'] as never), high: strip(value['high'] as never), low: strip(value['low'] as never), close: strip(value['close'] as never) }
    if ('carried' in value && 'record' in value) return { ...value, record: strip(value['record'] as never) }
    if ('twap' in value) return { ...value, first: strip(value['first'] as never), last: strip(value['last'] as never) }
    return strip(value)
  }
  if (Array.isArray(answer)) return answer.map(item)
  return Object.fromEntries(Object.entries(answer as Record<string, Record<string, unknown>>).map(([symbol, value]) => [symbol, item(value)]))
}

const WINDOW = `fromTimestamp=${T0}&toTimestamp=${T0 + 9 * MINUTE}`
const FORMS = {
  'latest': 'symbol=BTC',
  'latest-N': 'symbol=BTC&limit=20&offset=3',
  'history': `symbol=ETH&${WINDOW}&limit=50`,
  'as-of': `symbol=ETH&toTimestamp=${T0 + 90 * SECOND + 500}&direction=nearest`,
  'several': 'symbols=BTC,ETH',
  'all': `toTimestamp=${T0 + 5 * SECOND}`,
  'range (streamed)': `symbol=BTC&${WINDOW}&interval=1000`,
  'range': `symbol=BTC&${WINDOW}&interval=60000`,
  'fill': `symbol=BTC&fromTimestamp=${T0}&toTimestamp=${T0 + 20 * MINUTE}&interval=${MINUTE}&fill=prev`,
  'candles': `symbol=ETH&${WINDOW}&interval=${MINUTE}&aggregate=candles`,
  'twap': `aggregate=twap&${WINDOW}`,
}

describe('GET /prices with fields', () => {
  it.each(Object.entries(FORMS))('%s: a drop list is the whole answer without those keys, byte for byte', async (_form, search) => {
    const whole = await get(search)
    const selected = await get(`${search}&fields=-signature,-providerPublicKey`)
    expect(whole.status).toBe(200)
    expect(selected.status).toBe(200)
    expect(selected.body).toBe(JSON.stringify(stripped(JSON.parse(whole.body), (key) => key === 'signature' || key === 'providerPublicKey')))
    expect(selected.body.length).toBeLessThanOrEqual(whole.body.length)
  })

  it.each(Object.entries(FORMS))('%s: a keep list keeps its fields only, extras left out', async (_form, search) => {
    const keep = ['symbol', 'value', 'timestamp', 'minutes']
    const whole = await get(search)
    const selected = await get(`${search}&fields=${keep.join(',')}`)
    expect(selected.body).toBe(JSON.stringify(stripped(JSON.parse(whole.body), (key) => !keep.includes(key))))
  })

  it('an extra field a writer added stays with a drop list, goes with a keep list', async () => {
    const search = `symbol=BTC&toTimestamp=${T0 + 7 * SECOND}`
    expect(JSON.parse((await get(`${search}&fields=-source`)).body)[0]).toHaveProperty('evmSignature', '0xabc')
    expect(JSON.parse((await get(`${search}&fields=id,value`)).body)).toEqual([{ id: expect.any(String), value: expect.any(Number) }])
  })

  it('the slim answer is much smaller: latest-1 without the public key and the signature', async () => {
    const whole = await get('symbol=BTC')
    const slim = await get('symbol=BTC&fields=-signature,-providerPublicKey')
    expect(Number(slim.headers.get('content-length'))).toBe(Buffer.byteLength(slim.body))
    expect(slim.body.length * 3).toBeLessThan(whole.body.length)
  })

  it.each([
    ['fields=', 'must name at least one record field'],
    ['fields=foo', 'unknown record field "foo" in fields="foo"'],
    ['fields=value,,id', 'an empty entry in fields="value,,id"'],
    ['fields=value,-signature', 'not both (got "value,-signature")'],
    ['fields=value&fields=id', 'parameter fields must be given at most once (got "value", "id")'],
    ['fields=value&fields=value', 'parameter fields must be given at most once'],
  ])('symbol=BTC&%s: 400 PRICE_INVALID_QUERY naming fields and the value, GET and HEAD alike', async (bad, message) => {
    const response = await get(`symbol=BTC&${bad}`)
    expect(response.status).toBe(400)
    const { error } = JSON.parse(response.body) as { error: { code: string; message: string } }
    expect(error.code).toBe('PRICE_INVALID_QUERY')
    expect(error.message).toContain(message)
    expect(error.message).toContain('fields')
    expect((await fetch(`${server.url}/prices?symbol=BTC&${bad}`, { method: 'HEAD' })).status).toBe(400)
  })

  it('a name given twice counts once', async () => {
    expect((await get('symbol=BTC&fields=value,value')).body).toBe((await get('symbol=BTC&fields=value')).body)
  })
})

describe('GET /prices/export with fields', () => {
  async function lines(search: string): Promise<{ status: number; lines: string[]; body: string }> {
    const response = await fetch(`${server.url}/prices/export?${search}`)
    const body = await response.text()
    return { status: response.status, body, lines: response.status === 200 ? body.slice(0, -1).split('\n') : [] }
  }

  it('each line keeps the selected fields of its record, in the record’s order', async () => {
    const whole = await lines('symbol=ETH')
    const slim = await lines('symbol=ETH&fields=-signature,-providerPublicKey,-source')
    expect(slim.lines).toHaveLength(COUNT)
    expect(slim.lines).toEqual(whole.lines.map((line) => JSON.stringify((stripped([JSON.parse(line)], (key) => ['signature', 'providerPublicKey', 'source'].includes(key)) as unknown[])[0])))
    const kept = await lines('symbol=ETH&fields=timestamp,value')
    expect(kept.lines[0]).toBe(JSON.stringify({ value: JSON.parse(whole.lines[0]!).value, timestamp: T0 }))
  })

  it('a bad or repeated fields is a coded 400 before any byte', async () => {
    for (const bad of ['fields=nope', 'fields=', 'fields=value&fields=id', 'fields=-id,value']) {
      const response = await lines(`symbol=ETH&${bad}`)
      expect(response.status, bad).toBe(400)
      expect(JSON.parse(response.body).error).toMatchObject({ code: 'PRICE_INVALID_QUERY', message: expect.stringContaining('fields') })
    }
  })
})

describe('GET /prices/stream with fields', () => {
  it('each event’s records keep the selected fields; a bad fields is a coded 400', async () => {
    const sse = await openSse(`${server.url}/prices/stream?symbol=BTC&after=0&fields=timestamp,value`)
    try {
      const events = await sse.until('prices')
      const { records } = JSON.parse(events.at(-1)!.data) as { records: object[] }
      expect(records).toHaveLength(COUNT)
      expect(records.map((record) => Object.keys(record))).toEqual(records.map(() => ['value', 'timestamp']))
      expect(records[0]).toEqual({ value: expect.any(Number), timestamp: T0 })
    } finally {
      await sse.close()
    }
    for (const bad of ['fields=nope', 'fields=value&fields=id']) {
      const response = await fetch(`${server.url}/prices/stream?symbol=BTC&${bad}`)
      expect(response.status, bad).toBe(400)
      expect(((await response.json()) as { error: { code: string; message: string } }).error).toMatchObject({ code: 'PRICE_INVALID_QUERY', message: expect.stringContaining('fields') })
    }
  })
})
