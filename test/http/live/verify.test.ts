/**
 * GET /prices/verify against a real store that flags signatures, served by
 * startServer: the report equals `store.verify()` for the same selection,
 * bad parameters answer 400 with the library's codes in the documented
 * shape, HEAD sends no body; one report at a time (503 HTTP_BUSY past it) and
 * a client leaving aborts its report, on a stub store; and the signature
 * counters in /metrics.
 */
import { readFile } from 'node:fs/promises'
import { MemoryLevel } from 'memory-level'
import { parse } from 'yaml'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MAX_VERIFY_REPORTS } from '../../../src/adapters/http/live/verify-endpoint.js'
import { startServer, type RunningServer } from '../../../src/adapters/http/node.js'
import { PriceStore, type NewPriceRecord } from '../../../src/index.js'
import { T0 } from '../../../src/testing/records.js'
import { until } from '../../support/http/operations-helpers.js'
import { checkSchema } from '../../support/http/schema-check.js'
import { arweaveSign, newArweaveWallet, type ArweaveWallet } from '../../trust/support/redstone-signers.js'

let doc: Record<string, any>
let wallet: ArweaveWallet
let store: PriceStore
let server: RunningServer

async function signed(symbol: string, offset: number): Promise<NewPriceRecord> {
  const record = {
    id: `${symbol}-${offset}`, symbol, provider: wallet.address, value: 100 + offset, permawebTx: 'tx', version: '0.4',
    source: { binance: 100 + offset }, timestamp: T0 + offset * 1000,
  }
  return { ...record, signature: await arweaveSign(record, wallet) }
}

beforeAll(async () => {
  doc = parse(await readFile(new URL('../../../docs/openapi.yaml', import.meta.url), 'utf8')) as Record<string, any>
  wallet = await newArweaveWallet()
  store = await PriceStore.open(new MemoryLevel() as never, {
    provider: { name: 'redstone', id: wallet.address, publicKey: wallet.publicKey }, signatures: { policy: 'flag', threads: 1 },
  })
  await store.putMany([await signed('BTC', 0), await signed('BTC', 1), { ...(await signed('BTC', 2)), value: 7 }, await signed('ETH', 0)])
  server = await startServer({ store, metrics: true })
}, 60_000)

afterAll(async () => {
  await server?.close()
  await store?.close()
})

async function get(query: string, method = 'GET', base = server.url): Promise<{ status: number; body: any; headers: Headers }> {
  const response = await fetch(`${base}/prices/verify${query}`, { method })
  const text = await response.text()
  return { status: response.status, body: text === '' ? undefined : JSON.parse(text), headers: response.headers }
}

describe('GET /prices/verify', () => {
  it.each([
    ['', {}],
    ['?symbol=BTC&recheck=true', { symbols: ['BTC'], recheck: true }],
    [`?symbols=BTC,ETH&fromTimestamp=${T0 + 1000}&toTimestamp=${T0 + 2000}&limit=0`, { symbols: ['BTC', 'ETH'], from: T0 + 1000, to: T0 + 2000, limit: 0 }],
  ])('%s answers what store.verify() reports, in the documented shape', async (query, options) => {
    const { status, body, headers } = await get(query)
    expect(status).toBe(200)
    expect(headers.get('cache-control')).toBe('no-store')
    expect(body).toEqual(JSON.parse(JSON.stringify(await store.verify(options))))
    expect(checkSchema(body, { $ref: '#/components/schemas/VerifyReport' }, doc)).toEqual([])
  })

  it('names the failing record, as written and when rechecked', async () => {
    const { body } = await get('?recheck=true')
    expect(body).toMatchObject({ policy: 'flag', records: 4, stored: { valid: 3, invalid: 1, unchecked: 0 }, recheck: { verdicts: { valid: 3, invalid: 1 }, altered: [] } })
    expect(body.failing).toMatchObject([{ symbol: 'BTC', timestamp: T0 + 2000, id: 'BTC-2', verdict: { overall: 'invalid' } }])
  })

  it('sends no body to HEAD', async () => {
    const { status, body } = await get('?symbol=ETH', 'HEAD')
    expect(status).toBe(200)
    expect(body).toBeUndefined()
  })

  it.each([
    ['?from=1', 'PRICE_INVALID_QUERY'],
    ['?recheck=yes', 'PRICE_INVALID_QUERY'],
    ['?limit=ten', 'PRICE_INVALID_QUERY'],
    ['?limit=20000', 'PRICE_INVALID_QUERY'],
    ['?symbol=BTC&symbol=ETH', 'PRICE_INVALID_QUERY'],
    ['?symbol=BTC&symbols=ETH', 'PRICE_INVALID_QUERY'],
    ['?fromTimestamp=soon', 'PRICE_INVALID_RANGE'],
    ['?fromTimestamp=5&toTimestamp=1', 'PRICE_INVALID_RANGE'],
    ['?symbols=BTC,,ETH', 'PRICE_INVALID_SYMBOL'],
  ])('%s answers 400 %s in the documented shape', async (query, code) => {
    const { status, body } = await get(query)
    expect(status).toBe(400)
    expect(body.error.code).toBe(code)
    expect(checkSchema(body, { $ref: '#/components/schemas/ClientErrorBody' }, doc)).toEqual([])
  })

  it(`makes at most ${MAX_VERIFY_REPORTS} report at once (503 HTTP_BUSY past it), and aborts the report of a client that left`, async () => {
    const asked: { signal: AbortSignal; answer: (value: unknown) => void }[] = []
    const stub = {
      query: async () => [],
      verify: (options: { signal: AbortSignal }) => new Promise((resolve) => asked.push({ signal: options.signal, answer: resolve })),
    }
    const held = await startServer({ store: stub as never })
    try {
      const leaving = new AbortController()
      const first = fetch(`${held.url}/prices/verify`, { signal: leaving.signal }).catch(() => undefined)
      await until(() => asked.length === 1, 'the first report asked of the store')
      const busy = await fetch(`${held.url}/prices/verify`)
      expect(busy.status).toBe(503)
      expect(((await busy.json()) as { error: { code: string } }).error.code).toBe('HTTP_BUSY')
      leaving.abort()
      await until(() => asked[0]!.signal.aborted, 'the report of the client that left aborted')
      asked[0]!.answer({ records: 0 })
      await first
      // The slot is free again once the first report settled.
      const next = fetch(`${held.url}/prices/verify`)
      await until(() => asked.length === 2, 'the next report asked of the store')
      asked[1]!.answer({ records: 0 })
      expect((await next).status).toBe(200)
    } finally {
      await held.close()
    }
  })
})

describe('the signature metrics', () => {
  it('count the verdicts taken as written, by verdict, and the batches refused', async () => {
    const text = await (await fetch(`${server.url}/metrics`)).text()
    expect(text).toMatch(/^price_store_signature_verdicts_total\{verdict="valid"\} 3$/m)
    expect(text).toMatch(/^price_store_signature_verdicts_total\{verdict="invalid"\} 1$/m)
    expect(text).toMatch(/^price_store_signature_verdicts_total\{verdict="signer-not-allowed"\} 0$/m)
    expect(text).toMatch(/^price_store_signature_rejected_batches_total 0$/m)
    expect(store.signatures).toEqual({ policy: 'flag', verdicts: { valid: 3, unsigned: 0, invalid: 1, malformed: 0, 'signer-not-allowed': 0 }, rejectedBatches: 0 })
  })

  it('are absent for a store that does not verify', async () => {
    const plain = await PriceStore.open(new MemoryLevel() as never, { provider: { name: 'redstone', id: wallet.address, publicKey: wallet.publicKey } })
    const served = await startServer({ store: plain, metrics: true })
    try {
      expect(await (await fetch(`${served.url}/metrics`)).text()).not.toMatch(/price_store_signature_/)
    } finally {
      await served.close()
      await plain.close()
    }
  })
})
