import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import type { RunningServer } from '../../src/http.js'
import { toExactJson } from '../../src/http.js'
import type { PriceRecord, PriceStore } from '../../src/index.js'
import { record, run, tempDir, writeLines } from '../cli/helpers.js'
import { END, openDemoStore, serve } from '../support/http/demo-server.js'
import { checkSchema } from '../support/http/schema-check.js'

// GET /prices?quote=…&base=… on the demo data set of `npm start` (ETH and BTC), checked against
// docs/openapi.yaml and against the records each rate names; and `price-store query quote=… base=…`.

let doc: Record<string, any>
let store: PriceStore
let server: RunningServer

beforeAll(async () => {
  doc = parse(await readFile(new URL('../../docs/openapi.yaml', import.meta.url), 'utf8')) as Record<string, any>
  ;({ store } = await openDemoStore())
  server = await serve(store)
})

afterAll(async () => {
  await server?.close()
  await store?.close()
})

/** GETs `/prices?query`; a 200 body must fit the documented answer, an error body the documented error. */
async function get(query: string): Promise<{ status: number; body: any; text: string }> {
  const response = await fetch(`${server.url}/prices?${query}`)
  const text = await response.text()
  const body = JSON.parse(text)
  const schema = response.status === 200 ? doc.components.schemas.PriceAnswer : doc.components.schemas.ClientErrorBody
  expect(checkSchema(body, schema, doc), query).toEqual([])
  return { status: response.status, body, text }
}

const ref = (r: PriceRecord) => ({ id: r.id, timestamp: r.timestamp, value: r.value })

describe('GET /prices with quote and base', () => {
  it('the latest: ETH in BTC from the two newest records, one division, both named', async () => {
    const { status, body } = await get('quote=ETH&base=BTC')
    expect(status).toBe(200)
    const [eth] = await store.latest('ETH')
    const [btc] = await store.latest('BTC')
    expect(body).toEqual({
      quote: 'ETH', base: 'BTC',
      point: { value: eth!.value / btc!.value, timestamp: Math.max(eth!.timestamp, btc!.timestamp), age: Math.abs(eth!.timestamp - btc!.timestamp), legs: { quote: ref(eth!), base: ref(btc!) } },
    })
  })

  it('as of a time, and a range of one rate per bucket, each leg the record the as-of form answers', async () => {
    const at = END - 3_600_000 + 1_234
    const { body } = await get(`quote=ETH&base=BTC&toTimestamp=${at}`)
    const [eth] = await store.latest('ETH', { to: at })
    const [btc] = await store.latest('BTC', { to: at })
    expect(body.at).toBe(at)
    expect(body.point.legs).toEqual({ quote: ref(eth!), base: ref(btc!) })
    expect(body.point.value).toBe(eth!.value / btc!.value)

    // The demo data: every 10 s for the 2 hours before END.
    const from = END - 2 * 3_600_000 + 60_000
    const range = await get(`quote=ETH&base=BTC&fromTimestamp=${from}&toTimestamp=${END - 1}&interval=1800000`)
    expect(range.body).toHaveLength(4)
    for (const sample of range.body) {
      const [q] = await store.latest('ETH', { to: sample.at })
      const [b] = await store.latest('BTC', { to: sample.at })
      expect(sample).toEqual({ bucket: sample.at - 1_799_999, at: sample.at, point: expect.objectContaining({ value: q!.value / b!.value, legs: { quote: ref(q!), base: ref(b!) } }) })
    }
  })

  it('candles and TWAP of the derived series fit their schemas; maxAge refuses rates whose legs are too far apart, marked', async () => {
    const from = END - 2 * 3_600_000 + 60_000
    const candles = await get(`quote=ETH&base=BTC&fromTimestamp=${from}&toTimestamp=${END - 1}&interval=1800000&aggregate=candles`)
    expect(candles.body).toHaveLength(4)
    for (const candle of candles.body) {
      expect(candle.low.value).toBeLessThanOrEqual(candle.open.value)
      expect(candle.high.value).toBeGreaterThanOrEqual(candle.close.value)
      expect(candle.points).toBeGreaterThan(100)
      expect(candle.refused).toBe(0)
    }
    const twap = await get(`quote=ETH&base=BTC&fromTimestamp=${from}&toTimestamp=${END - 1}&aggregate=twap`)
    expect(twap.body).toMatchObject({ quote: 'ETH', base: 'BTC', from, to: END - 1, start: from })
    expect(twap.body.twap).toBeGreaterThanOrEqual(Math.min(...candles.body.map((c: any) => c.low.value)))
    expect(twap.body.twap).toBeLessThanOrEqual(Math.max(...candles.body.map((c: any) => c.high.value)))
    // Far past the data both legs are an hour old but tied to each other: maxAge bounds their distance, not their age.
    const late = await get(`quote=ETH&base=BTC&toTimestamp=${END + 3_600_000}&maxAge=0`)
    expect(late.body.at).toBe(END + 3_600_000)
    if (late.body.point === undefined) expect(late.body).toMatchObject({ refused: 'legs-too-far-apart', legs: { quote: expect.any(Object), base: expect.any(Object) } })
    else expect(late.body.point.age).toBe(0)
  })

  it('bad input is a coded 400: an unknown or missing leg, one symbol twice, a stray parameter', async () => {
    const cases: [string, string, string][] = [
      ['quote=NOPE&base=BTC', 'PRICE_INVALID_SYMBOL', 'quote'],
      ['quote=ETH&base=NOPE', 'PRICE_INVALID_SYMBOL', 'base'],
      ['quote=ETH', 'PRICE_INVALID_QUERY', 'base'],
      ['quote=ETH&base=ETH', 'PRICE_INVALID_QUERY', 'base'],
      ['quote=ETH&base=BTC&symbol=ETH', 'PRICE_INVALID_QUERY', 'symbol'],
      ['quote=ETH&base=BTC&fill=prev', 'PRICE_INVALID_QUERY', 'fill'],
      ['quote=ETH&base=BTC&fromTimestamp=1', 'PRICE_INVALID_QUERY', 'fromTimestamp'],
      ['quote=ETH&base=BTC&aggregate=twap&fromTimestamp=1', 'PRICE_INVALID_RANGE', 'toTimestamp'],
      ['quote=ETH&base=BTC&maxAge=-1', 'PRICE_INVALID_QUERY', 'maxAge'],
      ['quote=E%20TH&base=BTC', 'PRICE_INVALID_SYMBOL', 'quote'],
    ]
    for (const [query, code, parameter] of cases) {
      const { status, body } = await get(query)
      expect([query, status, body.error.code]).toEqual([query, 400, code])
      expect(body.error.message, query).toContain(parameter)
    }
  })

  it('symbol=ETH/BTC still names a stored symbol: the demo data has none, so []', async () => {
    expect((await get('symbol=ETH%2FBTC')).text).toBe('[]')
  })
})

describe('price-store query quote=… base=…', () => {
  it('passes the parameters through and prints the same answer', async () => {
    const temp = await tempDir()
    try {
      const db = join(temp.dir, 'db')
      const input = await writeLines(temp.dir, 'in.ndjson', [record('ETH', 1_000, { value: 3 }), record('BTC', 2_000, { value: 4 }), record('ETH', 3_000, { value: 5 })].map((r) => toExactJson(r)))
      expect((await run(['import', '--db', db, input])).code).toBe(0)
      const latest = await run(['query', '--db', db, 'quote=ETH', 'base=BTC'])
      expect(latest.code).toBe(0)
      expect(JSON.parse(latest.stdout)).toEqual({
        quote: 'ETH', base: 'BTC',
        point: { value: 5 / 4, timestamp: 3_000, age: 1_000, legs: { quote: { id: 'ETH-3000', timestamp: 3_000, value: 5 }, base: { id: 'BTC-2000', timestamp: 2_000, value: 4 } } },
      })
      const range = await run(['query', '--db', db, 'quote=ETH', 'base=BTC', 'fromTimestamp=0', 'toTimestamp=2999', 'interval=1000'])
      expect(JSON.parse(range.stdout).map((s: any) => s.refused ?? s.point.value)).toEqual(['no-quote', 'no-base', 3 / 4])
      const bad = await run(['query', '--db', db, 'quote=ETH', 'base=NOPE'])
      expect(bad.code).not.toBe(0)
      expect(bad.stderr).toContain('PRICE_INVALID_SYMBOL')
    } finally {
      await temp.cleanup()
    }
  })
})
