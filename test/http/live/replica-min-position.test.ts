/**
 * "Read at least position P" (issue 21): the `minPosition` parameter and the
 * `x-min-position` header on reads. A node that has applied P answers as
 * usual (the parameter is taken out first, so every query form answers as
 * without it); a replicated node waits for P up to `minPositionWaitMs`,
 * holding no query-gate slot; a node that does not reach it answers 503
 * `HTTP_POSITION_NOT_REACHED`. A fake replica stands in for a cluster node.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createPricesHandler } from '../../../src/adapters/http/handler.js'
import { startServer, type RunningServer } from '../../../src/adapters/http/node.js'
import { isPriceStoreError, type PriceStore } from '../../../src/index.js'
import { END, openDemoStore } from '../../support/http/demo-server.js'
import { until } from '../../support/http/operations-helpers.js'
import { answerOf } from '../../support/http/write-server.js'
import { FakeReplica } from './replica-fake.js'

let store: PriceStore
/** A single node (no replica): its position is the store's, 1 after the demo records' one batch. */
let single: RunningServer
/** A replicated node at position 3, with the default wait. */
let replicated: RunningServer
let replica: FakeReplica
/** A replicated node at position 3 that waits 50 ms at most. */
let impatient: RunningServer
let impatientReplica: FakeReplica
const reported: unknown[] = []

beforeAll(async () => {
  ;({ store } = await openDemoStore())
  const onError = (err: unknown): void => void reported.push(err)
  single = await startServer({ store, onError })
  replica = new FakeReplica()
  replica.advanceTo(3)
  replicated = await startServer({ store, replica, onError, maxConcurrentQueries: 1 })
  impatientReplica = new FakeReplica()
  impatientReplica.advanceTo(3)
  impatient = await startServer({ store, replica: impatientReplica, minPositionWaitMs: 50, onError })
}, 30_000)

afterAll(async () => {
  await single?.close()
  await replicated?.close()
  await impatient?.close()
  await store?.close()
})

async function get(url: string, headers: Record<string, string> = {}, signal?: AbortSignal): Promise<{ status: number; headers: Headers; text: string; json: any }> {
  return answerOf(await fetch(url, { headers, ...(signal === undefined ? {} : { signal }) }))
}

const FROM = END - 3_600_000
const READS = [
  '/prices?symbol=BTC',
  '/prices?symbols=BTC,ETH',
  '/prices?symbol=ETH&limit=5&offset=2',
  `/prices?symbol=BTC&fromTimestamp=${FROM}&toTimestamp=${END}&interval=600000`,
  `/prices?symbol=AR&fromTimestamp=${FROM}&toTimestamp=${END}&interval=600000&aggregate=candles`,
  `/prices/export?symbol=USDC.e&from=${FROM}`,
  '/stats',
  // The reports read data too (now fixed, so two answers are alike byte for byte).
  `/prices/quality?symbol=BTC&fromTimestamp=${FROM}&toTimestamp=${END}&now=${END}`,
  `/prices/verify?symbol=BTC&fromTimestamp=${FROM}&toTimestamp=${END}`,
  `/udf/history?symbol=BTC&resolution=60&from=${Math.floor(FROM / 1000)}&to=${Math.floor(END / 1000)}`,
  '/udf/symbols?symbol=ETH',
]

/** `path` with `minPosition=value` added to its query. */
function withFloor(path: string, value: string): string {
  return `${path}${path.includes('?') ? '&' : '?'}minPosition=${value}`
}

describe('minPosition on a single node', () => {
  it('answers every read exactly as without it once the position is reached (parameter or header)', async () => {
    for (const path of READS) {
      const plain = await get(`${single.url}${path}`)
      expect(plain.status, path).toBe(200)
      for (const value of ['0', '1', '0001']) {
        const floored = await get(`${single.url}${withFloor(path, value)}`)
        expect(floored.status, path).toBe(200)
        expect(floored.text, path).toBe(plain.text)
      }
      const byHeader = await get(`${single.url}${path}`, { 'x-min-position': '1' })
      expect(byHeader.text, path).toBe(plain.text)
    }
  })

  it('answers 503 HTTP_POSITION_NOT_REACHED at once for a position the node has not applied', async () => {
    for (const path of ['/prices?symbol=BTC', '/prices/export', '/stats', '/prices/quality?symbol=BTC', '/prices/verify?symbol=BTC']) {
      for (const [url, headers] of [[`${single.url}${withFloor(path, '2')}`, {}], [`${single.url}${path}`, { 'x-min-position': '2' }]] as const) {
        const res = await get(url, headers)
        expect(res.status, url).toBe(503)
        expect(res.headers.get('retry-after')).toBe('1')
        expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8')
        expect(res.json.error).toMatchObject({ code: 'HTTP_POSITION_NOT_REACHED', position: 1, minPosition: 2 })
        expect(res.json.error.message).toMatch(/position 1.*minPosition 2/)
      }
    }
  })

  it('answers a UDF endpoint in UDF\'s error shape', async () => {
    const res = await get(`${single.url}${withFloor('/udf/symbols?symbol=ETH', '7')}`)
    expect(res.status).toBe(503)
    expect(res.json).toMatchObject({ s: 'error', errmsg: res.json.error.message, error: { code: 'HTTP_POSITION_NOT_REACHED', position: 1, minPosition: 7 } })
    const bad = await get(`${single.url}${withFloor('/udf/symbols?symbol=ETH', 'x')}`)
    expect(bad.status).toBe(400)
    expect(bad.json).toMatchObject({ s: 'error', error: { code: 'PRICE_INVALID_QUERY' } })
  })

  it('answers 400 PRICE_INVALID_QUERY for a minPosition that is not a position', async () => {
    const bad = ['', 'abc', '-1', '1.5', '1e3', ' 1', '0x10', '9007199254740992', '99999999999999999999']
    for (const value of bad) {
      const res = await get(`${single.url}/prices?symbol=BTC&minPosition=${encodeURIComponent(value)}`)
      expect(res.status, value).toBe(400)
      expect(Object.keys(res.json.error)).toEqual(['code', 'message'])
      expect(res.json.error.code).toBe('PRICE_INVALID_QUERY')
      expect(res.json.error.message).toContain('minPosition')
    }
    const twice = await get(`${single.url}/prices?symbol=BTC&minPosition=1&minPosition=1`)
    expect(twice.status).toBe(400)
    expect(twice.json.error.message).toMatch(/at most once/)
    const header = await get(`${single.url}/prices?symbol=BTC`, { 'x-min-position': 'soon' })
    expect(header.status).toBe(400)
    expect(header.json.error.message).toContain('x-min-position')
    const exported = await get(`${single.url}/prices/export?minPosition=-1`)
    expect(exported.status).toBe(400)
    expect(exported.json.error.code).toBe('PRICE_INVALID_QUERY')
  })

  it('with both the parameter and the header, needs the larger', async () => {
    expect((await get(`${single.url}/prices?symbol=BTC&minPosition=1`, { 'x-min-position': '2' })).status).toBe(503)
    expect((await get(`${single.url}/prices?symbol=BTC&minPosition=2`, { 'x-min-position': '1' })).status).toBe(503)
    expect((await get(`${single.url}/prices?symbol=BTC&minPosition=1`, { 'x-min-position': '0' })).status).toBe(200)
  })

  it('leaves alone what reads no data: /health, /udf/config, /udf/time', async () => {
    for (const path of ['/health', '/udf/config', '/udf/time']) {
      expect((await get(`${single.url}${path}?minPosition=99`)).status, path).toBe(200)
      expect((await get(`${single.url}${path}`, { 'x-min-position': 'x' })).status, path).toBe(200)
    }
  })
})

describe('minPosition on a replicated node', () => {
  it('answers at once when the node has applied the position, without waiting', async () => {
    const waits = replica.waits.length
    const plain = await get(`${replicated.url}/prices?symbol=BTC`)
    const res = await get(`${replicated.url}/prices?symbol=BTC&minPosition=3`)
    expect(res.status).toBe(200)
    expect(res.text).toBe(plain.text)
    expect(replica.waits.length).toBe(waits)
  })

  it('waits for the position, holding no query slot, then answers as usual', async () => {
    const plain = await get(`${replicated.url}/prices?symbols=BTC,ETH`)
    const heavy = `/prices?symbol=BTC&fromTimestamp=${FROM}&toTimestamp=${END}&interval=60000`
    const heavyPlain = await get(`${replicated.url}${heavy}`)
    const waiting = get(`${replicated.url}/prices?symbols=BTC,ETH&minPosition=5`)
    const byHeader = get(`${replicated.url}${heavy}`, { 'x-min-position': '4' })
    await until(() => replica.waiting === 2, 'both reads wait for their position')
    expect(replica.waits.slice(-2)).toEqual(expect.arrayContaining([{ position: 5, timeoutMs: 5_000 }, { position: 4, timeoutMs: 5_000 }]))
    // The gate (one slot) is free: the waiting reads hold nothing, and another heavy query runs meanwhile.
    expect(replicated.queries()).toMatchObject({ running: 0, queued: 0 })
    expect((await get(`${replicated.url}${heavy}`)).text).toBe(heavyPlain.text)
    replica.advanceTo(4)
    const heavyAnswer = await byHeader
    expect(heavyAnswer.status).toBe(200)
    expect(heavyAnswer.text).toBe(heavyPlain.text)
    expect(replica.waiting).toBe(1)
    replica.advanceTo(5)
    const answer = await waiting
    expect(answer.status).toBe(200)
    expect(answer.text).toBe(plain.text)
  })

  it('a POST batch waits for its position with its body unread, then answers it whole', async () => {
    const body = JSON.stringify({ symbols: ['BTC', 'ETH'], times: [FROM, END], direction: 'nearest' })
    const ask = (headers: Record<string, string>) =>
      fetch(`${replicated.url}/prices/batch`, { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers } }).then(answerOf)
    const plain = await ask({})
    expect(plain.status).toBe(200)
    const waiting = ask({ 'x-min-position': String(replica.position + 1) })
    await until(() => replica.waiting === 1, 'the batch waits for its position')
    replica.advanceTo(replica.position + 1)
    const answer = await waiting
    expect(answer.status).toBe(200)
    expect(answer.text).toBe(plain.text)
  })

  it('answers 503 HTTP_POSITION_NOT_REACHED with both positions once minPositionWaitMs passes', async () => {
    for (const path of ['/prices?symbol=BTC', '/prices/export', '/stats']) {
      const res = await get(`${impatient.url}${withFloor(path, '10')}`)
      expect(res.status, path).toBe(503)
      expect(res.headers.get('retry-after')).toBe('1')
      expect(res.json.error).toMatchObject({ code: 'HTTP_POSITION_NOT_REACHED', position: 3, minPosition: 10 })
      expect(res.json.error.message).toMatch(/within 50 ms/)
    }
    expect(impatientReplica.waits.at(-1)).toEqual({ position: 10, timeoutMs: 50 })
  })

  it('stops waiting when the client leaves', async () => {
    const leave = new AbortController()
    const left = get(`${replicated.url}/prices?symbol=BTC&minPosition=1000`, {}, leave.signal).catch((err: unknown) => err)
    await until(() => replica.waiting === 1, 'the read waits')
    leave.abort()
    await left
    await until(() => replica.abandoned === 1, 'the wait ends with its client, before its timeout')
    expect(replica.waiting).toBe(0)
  })

  it('answers the bad and the unwaited at once: 400 for a bad minPosition', async () => {
    const waits = replica.waits.length
    const res = await get(`${replicated.url}/prices?symbol=BTC&minPosition=next`)
    expect(res.status).toBe(400)
    expect(replica.waits.length).toBe(waits)
  })

  it('reports no error to the host for reads refused by their floor', () => {
    expect(reported).toEqual([])
  })
})

describe('replica options', () => {
  it('refuses bad maxLag, minPositionWaitMs and replica values with PRICE_INVALID_OPTIONS', () => {
    const stub = { query: async () => [] }
    const bad = [
      { maxLag: -1 }, { maxLag: 1.5 }, { maxStalenessMs: -1 }, { maxStalenessMs: 0.5 }, { minPositionWaitMs: -1 }, { minPositionWaitMs: 2 ** 31 }, { minPositionWaitMs: Number.NaN },
      { replica: {} }, { replica: { putBatch: () => {}, replication: () => {} } },
    ]
    for (const options of bad) {
      let caught: unknown
      try {
        createPricesHandler(stub, options as never)
      } catch (err) {
        caught = err
      }
      expect(isPriceStoreError(caught, 'PRICE_INVALID_OPTIONS'), JSON.stringify(options)).toBe(true)
    }
    expect(() => createPricesHandler(stub, { maxLag: 0, minPositionWaitMs: 0 })).not.toThrow()
  })
})
