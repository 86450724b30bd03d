/**
 * GET /prices/export and GET /stats against a real store served by
 * startServer. Expectations are computed from the records written, never
 * read back from the store.
 */
import { get } from 'node:http'
import { MemoryLevel } from 'memory-level'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type RunningServer } from '../../../src/adapters/http/node.js'
import { generateDemoRecords, type DemoRecord } from '../../../src/demo/demo-data.js'
import { createPricesHandler } from '../../../src/adapters/http/handler.js'
import { PriceStore, isPriceStoreError, type PriceRecord } from '../../../src/index.js'
import { countSnapshots } from '../../support/snapshots.js'
import { END, PROVIDER, TOKENS, asReturned, serve } from '../../support/http/demo-server.js'
import { openGet, until } from '../../support/http/operations-helpers.js'

const HOUR = 3_600_000
/** Twelve hours of five tokens every 10 s: 21,600 records (about 30 MB of NDJSON), over the default range cap of 10,000. */
const START = END - 12 * HOUR

let records: DemoRecord[]
let db: MemoryLevel<any, any>
let snapshots: { readonly open: number }
let store: PriceStore
let server: RunningServer
const errors: unknown[] = []

beforeAll(async () => {
  // Unsigned (a random Arweave-looking `signature`): fields in the order the store returns them, so the export's text can be built here.
  records = [...generateDemoRecords({ providerId: PROVIDER.id, end: END, durationMs: END - START, tokens: TOKENS, signed: false })]
  db = new MemoryLevel()
  snapshots = countSnapshots(db)
  store = await PriceStore.open(db, { provider: PROVIDER })
  for (let i = 0; i < records.length; i += 5_000) await store.putMany(records.slice(i, i + 5_000))
  server = await startServer({ store, onError: (err) => errors.push(err) })
}, 60_000)

afterAll(async () => {
  await server?.close()
  await store?.close()
})

/** The records of `keep` in export order (symbols by UTF-8 bytes, then timestamp and id), as the API returns them. */
function expectedExport(keep: (record: DemoRecord) => boolean = () => true): PriceRecord[] {
  return records
    .filter(keep)
    .sort((a, b) => Buffer.compare(Buffer.from(a.symbol), Buffer.from(b.symbol)) || a.timestamp - b.timestamp || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .map(asReturned)
}

/** GETs an export; its status, headers and records (the body parsed line by line, each line ending in a newline). */
async function exportOf(query: string, base = server.url): Promise<{ status: number; headers: Headers; records: PriceRecord[]; body: string }> {
  const response = await fetch(`${base}/prices/export${query === '' ? '' : `?${query}`}`)
  const body = await response.text()
  if (response.status !== 200) return { status: response.status, headers: response.headers, records: [], body }
  expect(body === '' || body.endsWith('\n')).toBe(true)
  const lines = body === '' ? [] : body.slice(0, -1).split('\n')
  return { status: 200, headers: response.headers, records: lines.map((line) => JSON.parse(line) as PriceRecord), body }
}

describe('GET /prices/export', () => {
  it('streams every record as NDJSON, more than the range cap, in the store\'s order', async () => {
    const expected = expectedExport()
    expect(expected.length).toBeGreaterThan(10_000)
    // /prices cannot give even one symbol's records at once (4,320 of BTC): limit is capped at 3,000.
    const capped = await fetch(`${server.url}/prices?symbol=BTC&limit=4320`)
    expect(capped.status).toBe(400)
    const { status, headers, records: exported } = await exportOf('')
    expect(status).toBe(200)
    expect(headers.get('content-type')).toBe('application/x-ndjson')
    expect(headers.get('cache-control')).toBe('no-store')
    expect(headers.get('content-length')).toBeNull()
    expect(exported).toHaveLength(expected.length)
    expect(exported).toEqual(expected)
    expect(errors).toEqual([])
  }, 60_000)

  it('filters by symbol (repeated, comma-separated, or symbols=) and by time (ms or ISO dates, bounds included)', async () => {
    const from = START + 3 * HOUR
    const to = START + 5 * HOUR
    const window = (record: DemoRecord) => record.timestamp >= from && record.timestamp <= to
    const ethAr = (record: DemoRecord) => record.symbol === 'ETH' || record.symbol === 'AR'
    const expected = expectedExport((record) => ethAr(record) && window(record))
    expect(expected.length).toBeGreaterThan(0)
    for (const query of [
      `symbol=ETH&symbol=AR&from=${from}&to=${to}`,
      `symbol=ETH,AR&from=${new Date(from).toISOString()}&to=${new Date(to).toISOString()}`,
      `symbols=AR,ETH&from=${from}&to=${to}`,
      `symbol=AR&symbols=ETH&from=${from}&to=${to}`,
    ]) {
      const { status, records: exported } = await exportOf(query)
      expect(status, query).toBe(200)
      expect(exported, query).toEqual(expected)
    }
    expect((await exportOf(`from=${to}`)).records).toEqual(expectedExport((record) => record.timestamp >= to))
    expect((await exportOf('symbol=stETH')).records).toEqual(expectedExport((record) => record.symbol === 'stETH'))
    // A symbol the store has no record of, and a window after the data: nothing, still 200.
    expect(await exportOf('symbol=NOPE')).toMatchObject({ status: 200, body: '' })
    expect(await exportOf(`from=${END + HOUR}`)).toMatchObject({ status: 200, body: '' })
  }, 60_000)

  it('refuses bad parameters with a coded 400 before any byte, GET and HEAD alike', async () => {
    const cases: [string, string][] = [
      ['from=yesterday', 'PRICE_INVALID_RANGE'],
      ['to=-5', 'PRICE_INVALID_RANGE'],
      ['from=June%201%202024', 'PRICE_INVALID_RANGE'],
      ['from=2024-06-01T00:00:00Z&to=2024-05-31', 'PRICE_INVALID_RANGE'],
      [`from=${END}&to=${START}`, 'PRICE_INVALID_RANGE'],
      ['from=1&from=2', 'PRICE_INVALID_QUERY'],
      ['fromTimestamp=1', 'PRICE_INVALID_QUERY'],
      ['symbol=', 'PRICE_INVALID_SYMBOL'],
      ['symbol=BTC,,ETH', 'PRICE_INVALID_SYMBOL'],
      ['symbol=BTC%20USD', 'PRICE_INVALID_SYMBOL'],
    ]
    for (const [query, code] of cases) {
      const response = await fetch(`${server.url}/prices/export?${query}`)
      expect(response.status, query).toBe(400)
      expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8')
      expect(((await response.json()) as { error: { code: string } }).error.code, query).toBe(code)
      const head = await fetch(`${server.url}/prices/export?${query}`, { method: 'HEAD' })
      expect(head.status, query).toBe(400)
    }
    const message = ((await (await fetch(`${server.url}/prices/export?fromTimestamp=1`)).json()) as { error: { message: string } }).error.message
    expect(message).toContain('"fromTimestamp"')
    expect(message).toContain('from')
  })

  it('HEAD: the headers of GET, no body', async () => {
    const head = await fetch(`${server.url}/prices/export?symbol=BTC`, { method: 'HEAD' })
    expect(head.status).toBe(200)
    expect(head.headers.get('content-type')).toBe('application/x-ndjson')
    expect(await head.text()).toBe('')
    await until(() => snapshots.open === 0, 'HEAD holds no snapshot')
  })

  it('a client that leaves half way stops the export: its snapshot is released, nothing is reported, the server goes on', async () => {
    const response = await openGet(`${server.url}/prices/export`)
    expect(response.statusCode).toBe(200)
    const received = await new Promise<number>((resolve) => response.once('data', (chunk: Buffer) => resolve(chunk.length)))
    expect(received).toBeGreaterThan(0)
    expect(snapshots.open).toBe(1) // the export is under way, holding its view
    response.destroy()
    await until(() => snapshots.open === 0, 'the export released its snapshot')
    expect(errors).toEqual([])
    const { records: btc } = await exportOf('symbol=BTC')
    expect(btc).toEqual(expectedExport((record) => record.symbol === 'BTC'))
  }, 30_000)

  it('a client that leaves while records are being read (not while it waits for the client) stops the export too', async () => {
    const [record] = expectedExport((candidate) => candidate.symbol === 'BTC')
    let release = (): void => {}
    const held = new Promise<void>((resolve) => (release = resolve))
    let reading = false
    let ended = false
    const slow = {
      query: () => Promise.resolve([]),
      export: () => ({
        async *[Symbol.asyncIterator]() {
          try {
            yield record!
            reading = true
            await held
            for (let i = 0; i < 10_000; i++) yield record!
          } finally {
            ended = true
          }
        },
      }),
    }
    const closed: unknown[] = []
    const running = await startServer({ store: slow, accessLog: (entry) => closed.push(entry) })
    try {
      const request = get(`${running.url}/prices/export`)
      request.on('error', () => {})
      await until(() => reading, 'the export reads its second record')
      request.destroy()
      await until(() => closed.length === 1, 'the server saw the client leave')
      release()
      await until(() => ended, 'the export ended (its records were returned)')
    } finally {
      await running.close()
    }
  })

  it('answers from one snapshot: records committed while it is sent are not in it', async () => {
    const expected = expectedExport()
    const expectedText = expected.map((record) => `${JSON.stringify(record)}\n`).join('')
    const response = await openGet(`${server.url}/prices/export`)
    const chunks: Buffer[] = []
    await new Promise<void>((resolve) => response.once('data', (chunk: Buffer) => {
      chunks.push(chunk)
      response.pause()
      resolve()
    }))
    // Still under way (a paused client holds it back): the writes below land in the middle of it.
    expect(snapshots.open).toBe(1)
    const later = (template: DemoRecord, timestamp: number, id: string): DemoRecord => ({ ...template, id, timestamp })
    const btc = records.find((record) => record.symbol === 'BTC')!
    const written = [
      later(btc, START + 6 * HOUR + 1, 'written-during-export-1'),
      later(btc, END + 1, 'written-during-export-2'),
      { ...later(btc, START + HOUR, 'written-during-export-3'), symbol: 'ZZZ' },
      { ...later(btc, START + HOUR, 'written-during-export-4'), symbol: 'stETH' },
    ]
    try {
      expect(await store.putMany(written)).toBe(written.length)
      response.on('data', (chunk: Buffer) => chunks.push(chunk))
      response.resume()
      await new Promise((resolve) => response.once('end', resolve))
      const text = Buffer.concat(chunks).toString('utf8')
      expect(text.length).toBe(expectedText.length)
      expect(text === expectedText).toBe(true)
      // A new export sees them.
      const { records: after } = await exportOf('symbol=ZZZ')
      expect(after.map((record) => record.id)).toEqual(['written-during-export-3'])
    } finally {
      // Keep the data set of the other tests: the test store is theirs too.
      records.push(...written)
    }
  }, 60_000)

  it('a closed store: 503 PRICE_NOT_OPEN before any byte', async () => {
    const closed = await PriceStore.open(new MemoryLevel(), { provider: PROVIDER })
    await closed.close()
    const running = await serve(closed)
    try {
      const response = await fetch(`${running.url}/prices/export`)
      expect(response.status).toBe(503)
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe('PRICE_NOT_OPEN')
      expect(response.headers.get('retry-after')).toBe('1')
    } finally {
      await running.close()
    }
  })

  it('a failure once records are sent cuts the connection (the body is incomplete) and is reported', async () => {
    const sent = expectedExport().slice(0, 2_000)
    const broken = {
      query: () => Promise.resolve([]),
      export: () => ({
        async *[Symbol.asyncIterator]() {
          yield* sent
          throw new Error('disk on fire')
        },
      }),
    }
    const reported: unknown[] = []
    const running = await startServer({ store: broken, onError: (err) => reported.push(err) })
    try {
      const response = await fetch(`${running.url}/prices/export`)
      expect(response.status).toBe(200)
      await expect(response.text()).rejects.toThrow()
      expect(reported.map((err) => (err as Error).message)).toEqual(['disk on fire'])
    } finally {
      await running.close()
    }
  })

  it('sends at most maxExports at once: one more is 503 HTTP_BUSY with retry-after (a bad request is still its 400, HEAD is not counted); a slot frees when an export ends', async () => {
    const running = await startServer({ store, maxExports: 2, onError: (err) => errors.push(err) })
    // Two exports of everything that the client does not read: backpressure holds them under way.
    const held = [await openGet(`${running.url}/prices/export`), await openGet(`${running.url}/prices/export`)]
    try {
      expect(held.map((response) => response.statusCode)).toEqual([200, 200])
      const refused = await fetch(`${running.url}/prices/export?symbol=BTC`)
      expect(refused.status).toBe(503)
      expect(refused.headers.get('retry-after')).toBe('1')
      expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('HTTP_BUSY')
      const bad = await fetch(`${running.url}/prices/export?fromTimestamp=1`)
      expect(bad.status).toBe(400)
      expect(((await bad.json()) as { error: { code: string } }).error.code).toBe('PRICE_INVALID_QUERY')
      expect((await fetch(`${running.url}/prices/export`, { method: 'HEAD' })).status).toBe(200)
      held.pop()!.destroy()
      let next = await exportOf('symbol=BTC', running.url)
      for (let i = 0; i < 1_000 && next.status === 503; i++) next = await exportOf('symbol=BTC', running.url)
      expect(next.status).toBe(200)
      expect(next.records).toEqual(expectedExport((record) => record.symbol === 'BTC'))
    } finally {
      held.forEach((response) => response.destroy())
      await running.close()
    }
    await until(() => snapshots.open === 0, 'every export released its snapshot')
    expect(errors).toEqual([])
  }, 30_000)

  it('cuts a client that leaves its socket full for exportStallMs, and frees its slot; maxExports 0 sends none', async () => {
    const running = await startServer({ store, maxExports: 1, exportStallMs: 100 })
    try {
      const stalled = await openGet(`${running.url}/prices/export`)
      expect(stalled.statusCode).toBe(200)
      // The client never reads (a paused socket does not even see the server close it): the server's side tells.
      await until(() => snapshots.open === 0, 'the cut export released its snapshot')
      stalled.destroy()
      expect((await exportOf('symbol=ETH', running.url)).records).toEqual(expectedExport((record) => record.symbol === 'ETH'))
    } finally {
      await running.close()
    }
    const none = await startServer({ store, maxExports: 0 })
    try {
      const refused = await fetch(`${none.url}/prices/export?symbol=BTC`)
      expect(refused.status).toBe(503)
      expect(((await refused.json()) as { error: { message: string } }).error.message).toContain('sends no export')
    } finally {
      await none.close()
    }
  }, 30_000)

  it('refuses a bad maxExports or exportStallMs with PRICE_INVALID_OPTIONS', () => {
    for (const options of [{ maxExports: -1 }, { maxExports: 1.5 }, { exportStallMs: 0 }, { exportStallMs: 'soon' as unknown as number }]) {
      let caught: unknown
      try {
        createPricesHandler(store, options)
      } catch (err) {
        caught = err
      }
      expect(isPriceStoreError(caught, 'PRICE_INVALID_OPTIONS'), JSON.stringify(options)).toBe(true)
    }
  })

  it('is served only for a store that can export; a store without it answers 404', async () => {
    const running = await serve({ query: () => Promise.resolve([]) })
    try {
      const response = await fetch(`${running.url}/prices/export`)
      expect(response.status).toBe(404)
      expect(((await response.json()) as { error: { message: string } }).error.message).not.toContain('/prices/export')
      expect((await fetch(`${running.url}/stats`)).status).toBe(404)
    } finally {
      await running.close()
    }
  })
})

describe('GET /stats', () => {
  it('answers the counts computed from the records written', async () => {
    const response = await fetch(`${server.url}/stats`)
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8')
    expect(response.headers.get('cache-control')).toBe('no-store')
    const stats = (await response.json()) as Record<string, any>
    const bySymbol = new Map<string, DemoRecord[]>()
    for (const record of records) bySymbol.set(record.symbol, [...(bySymbol.get(record.symbol) ?? []), record])
    const symbols = [...bySymbol.keys()].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)))
    expect(stats).toMatchObject({
      records: records.length,
      symbols: symbols.length,
      perSymbol: symbols.map((symbol) => {
        const timestamps = bySymbol.get(symbol)!.map((record) => record.timestamp)
        return { symbol, records: timestamps.length, firstTimestamp: Math.min(...timestamps), lastTimestamp: Math.max(...timestamps) }
      }),
      provider: { name: PROVIDER.name, id: PROVIDER.id, publicKey: PROVIDER.publicKey },
    })
    expect(Number.isSafeInteger(stats.formatVersion)).toBe(true)
    expect(stats).toHaveProperty('disk')
    expect(stats).toHaveProperty('unsealedRecords')
    // The same object the library gives.
    expect(stats).toEqual(JSON.parse(JSON.stringify(await store.stats())))
    const head = await fetch(`${server.url}/stats`, { method: 'HEAD' })
    expect(head.status).toBe(200)
    expect(await head.text()).toBe('')
  })

  it('a closed store: 503 PRICE_NOT_OPEN', async () => {
    const closed = await PriceStore.open(new MemoryLevel(), { provider: PROVIDER })
    await closed.close()
    const running = await serve(closed)
    try {
      const response = await fetch(`${running.url}/stats`)
      expect(response.status).toBe(503)
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe('PRICE_NOT_OPEN')
    } finally {
      await running.close()
    }
  })
})
