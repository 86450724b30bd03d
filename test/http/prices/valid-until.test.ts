/**
 * `validUntil=true` over HTTP (docs/http.md): GET /prices on every form
 * that answers records, a long answer streamed from the store's rows
 * (the JSON is spliced, not rebuilt) against the same answer built whole,
 * cursor pages, GET and POST /prices/batch, and the coded refusals. Without
 * it, every answer is byte for byte what it was.
 */
import { MemoryLevel } from 'memory-level'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type RunningServer } from '../../../src/adapters/http/node.js'
import { PriceStore, type PriceRecord } from '../../../src/index.js'
import { T0, TEST_PROVIDER, makeRecord } from '../../../src/testing/records.js'
import { referenceQuery, storedRecords } from '../../../src/testing/reference-model.js'
import { referenceValidUntil } from '../../../src/testing/reference-forms/valid-until.js'

const SECOND = 1_000
/** 600 records per symbol, one a second (a range with interval=1000 is longer than the handler sends whole), and two more in one millisecond. */
const COUNT = 600
const inputs = ['BTC', 'ETH'].flatMap((symbol) => [
  ...Array.from({ length: COUNT }, (_, i) => makeRecord({ symbol, timestamp: T0 + i * SECOND, id: `${symbol}-${String(i).padStart(3, '0')}` })),
  makeRecord({ symbol, timestamp: T0 + 10 * SECOND, id: `${symbol}-010-b` }),
  makeRecord({ symbol, timestamp: T0 + 10 * SECOND, id: `${symbol}-010-c` }),
])
const stored = storedRecords(inputs, TEST_PROVIDER)
const limits = { maxLimit: 3000, maxSymbols: 1000, maxRangePoints: 10000 }
const config = { provider: TEST_PROVIDER, limits }

let store: PriceStore
let server: RunningServer
const errors: unknown[] = []

beforeAll(async () => {
  store = await PriceStore.open(new MemoryLevel(), { provider: TEST_PROVIDER, limits })
  await store.putMany(inputs)
  server = await startServer({ store, onError: (err) => errors.push(err) })
})

afterAll(async () => {
  await server?.close()
  await store?.close()
  expect(errors).toEqual([])
})

async function get(path: string): Promise<{ status: number; body: string; headers: Headers }> {
  const response = await fetch(`${server.url}${path}`)
  return { status: response.status, body: await response.text(), headers: response.headers }
}

function model(search: string): unknown {
  const result = referenceQuery(stored, new URLSearchParams(search), config)
  if (!('answer' in result)) throw new Error(`the model refused ${search}`)
  return result.answer
}

const FORMS = [
  'symbol=BTC',
  'symbol=BTC&limit=700',
  `symbol=BTC&limit=5&fromTimestamp=${T0}&toTimestamp=${T0 + 12 * SECOND}`,
  `symbol=BTC&toTimestamp=${T0 + 10 * SECOND + 500}`,
  `symbol=BTC&toTimestamp=${T0 + 9 * SECOND + 1}&direction=after`,
  'symbols=BTC,ETH',
  `toTimestamp=${T0 + 10 * SECOND}`,
  `symbol=BTC&fromTimestamp=${T0}&toTimestamp=${T0 + (COUNT - 1) * SECOND}&interval=1000`,
  `symbol=BTC&fromTimestamp=${T0 - 5 * SECOND}&toTimestamp=${T0 + 30 * SECOND}&interval=7000&fill=prev`,
  `symbol=BTC&fromTimestamp=${T0 - 5 * SECOND}&toTimestamp=${T0 + 30 * SECOND}&interval=7000&fill=none`,
  'symbol=BTC&limit=600&fields=id,timestamp',
]

describe('GET /prices?validUntil=true', () => {
  it.each(FORMS)('%s: the model\'s answer, key order included; without validUntil the same bytes as validUntil=false', async (search) => {
    const asked = await get(`/prices?${search}&validUntil=true`)
    expect(asked.status).toBe(200)
    expect(asked.body).toBe(JSON.stringify(model(`${search}&validUntil=true`)))
    const plain = await get(`/prices?${search}`)
    expect((await get(`/prices?${search}&validUntil=false`)).body).toBe(plain.body)
    expect(plain.body).not.toContain('validUntil')
  })

  it('a streamed answer spliced from the rows\' JSON equals the answer built record by record', async () => {
    const streamed = await get('/prices?symbol=ETH&limit=602&validUntil=true')
    const built = (await store.query({ symbol: 'ETH', limit: '602', validUntil: 'true' })) as (PriceRecord & { validUntil: number | null })[]
    expect(streamed.body).toBe(JSON.stringify(built))
    expect(built.map((r) => r.validUntil).slice(-13, -9)).toEqual([T0 + 11 * SECOND, T0 + 10 * SECOND, T0 + 10 * SECOND, T0 + 10 * SECOND])
  })

  it('cursor pages: each page\'s last record has its true successor; validUntil may change between pages like fields', async () => {
    const seen: unknown[] = []
    let cursor = ''
    let pages = 0
    do {
      const page = await get(`/prices?symbol=BTC&limit=250&validUntil=true&cursor=${encodeURIComponent(cursor)}`)
      expect(page.status).toBe(200)
      seen.push(...(JSON.parse(page.body) as unknown[]))
      cursor = page.headers.get('x-next-cursor') ?? ''
      pages++
    } while (cursor !== '')
    expect(pages).toBe(3)
    expect(JSON.stringify(seen)).toBe(JSON.stringify(model('symbol=BTC&limit=700&validUntil=true')))
    const first = await get('/prices?symbol=BTC&limit=3&cursor=')
    const next = await get(`/prices?symbol=BTC&limit=3&validUntil=true&cursor=${encodeURIComponent(first.headers.get('x-next-cursor') as string)}`)
    expect(next.status).toBe(200)
    expect((JSON.parse(next.body) as { validUntil: unknown }[])[0]?.validUntil).toBe(T0 + 597 * SECOND)
  })

  it.each([
    [`symbol=BTC&fromTimestamp=${T0}&toTimestamp=${T0 + 10 * SECOND}&interval=1000&aggregate=candles&validUntil=true`],
    [`fromTimestamp=${T0}&toTimestamp=${T0 + 10 * SECOND}&aggregate=twap&validUntil=true`],
    ['quote=BTC&base=ETH&validUntil=true'],
    ['symbol=BTC&validUntil=yes'],
    ['symbol=BTC&validUntil=true&validUntil=true'],
  ])('refuses %s with a coded 400 naming validUntil', async (search) => {
    const answer = await get(`/prices?${search}`)
    expect(answer.status).toBe(400)
    const { error } = JSON.parse(answer.body) as { error: { code: string; message: string } }
    expect(error.code).toBe('PRICE_INVALID_QUERY')
    expect(error.message).toContain('validUntil')
  })
})

describe('/prices/batch?validUntil=true', () => {
  const times = [T0 - 1, T0 + 10 * SECOND, T0 + 10 * SECOND + 1, T0 + (COUNT + 5) * SECOND]

  /** The model's batch: each record in force at each time, with its validUntil. */
  function expected(): unknown {
    const answer: Record<string, Record<string, unknown>> = {}
    for (const symbol of ['BTC', 'ETH']) {
      answer[symbol] = {}
      for (const time of times) {
        const [record] = model(`symbol=${symbol}&toTimestamp=${time}`) as PriceRecord[]
        answer[symbol][String(time)] = record === undefined ? null : { record: { ...record, validUntil: referenceValidUntil(stored, record) }, age: time - record.timestamp }
      }
    }
    return answer
  }

  it('GET and POST: each entry\'s record carries validUntil; pages the same', async () => {
    const search = `symbols=BTC,ETH&times=${times.join(',')}`
    const plain = await get(`/prices/batch?${search}`)
    expect(plain.body).not.toContain('validUntil')
    const asked = await get(`/prices/batch?${search}&validUntil=true`)
    expect(asked.status).toBe(200)
    expect(JSON.parse(asked.body)).toEqual(expected())
    const posted = await fetch(`${server.url}/prices/batch`, { method: 'POST', body: JSON.stringify({ symbols: ['BTC', 'ETH'], times, validUntil: true }) })
    expect(await posted.text()).toBe(asked.body)
    const page = await get(`/prices/batch?${search}&validUntil=true&limit=2`)
    const whole = expected() as Record<string, Record<string, unknown>>
    expect(JSON.parse(page.body)).toEqual({ BTC: { [times[0]!]: whole['BTC']![String(times[0])], [times[1]!]: whole['BTC']![String(times[1])] }, ETH: { [times[0]!]: whole['ETH']![String(times[0])], [times[1]!]: whole['ETH']![String(times[1])] } })
  })

  it('refuses a validUntil other than true or false', async () => {
    const answer = await get(`/prices/batch?symbols=BTC&times=${T0}&validUntil=1`)
    expect(answer.status).toBe(400)
    expect(JSON.parse(answer.body)).toMatchObject({ error: { code: 'PRICE_INVALID_QUERY' } })
    const posted = await fetch(`${server.url}/prices/batch`, { method: 'POST', body: JSON.stringify({ symbols: ['BTC'], times: [T0], validUntil: 'true' }) })
    expect(posted.status).toBe(400)
  })
})
