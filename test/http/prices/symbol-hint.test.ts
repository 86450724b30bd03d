/**
 * `symbol=ETH/BTC` when no such symbol is stored: RedStone's `[]`, byte for
 * byte, and an `x-price-store-hint` header naming the cross-rate form; a
 * stored `ETH/BTC` is answered as any symbol, with no hint.
 */
import { MemoryLevel } from 'memory-level'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RunningServer } from '../../../src/adapters/http/node.js'
import { PriceStore } from '../../../src/index.js'
import { END, PROVIDER, openDemoStore, serve } from '../../support/http/demo-server.js'

let store: PriceStore
let server: RunningServer

beforeAll(async () => {
  ;({ store } = await openDemoStore())
  server = await serve(store)
})

afterAll(async () => {
  await server?.close()
  await store?.close()
})

const HINT = 'no symbol ETH/BTC is stored; for the price of ETH in BTC ask quote=ETH&base=BTC'

describe('GET /prices?symbol=Q/B', () => {
  it('answers [] with a hint header when no such symbol is stored, in every list form', async () => {
    for (const query of [
      'symbol=ETH/BTC',
      'symbol=ETH/BTC&limit=5',
      `symbol=ETH/BTC&toTimestamp=${END}`,
      `symbol=ETH/BTC&fromTimestamp=${END - 3_600_000}&toTimestamp=${END}&interval=600000`,
    ]) {
      const response = await fetch(`${server.url}/prices?${query}`)
      expect(response.status, query).toBe(200)
      expect(await response.text(), query).toBe('[]')
      expect(response.headers.get('x-price-store-hint'), query).toBe(HINT)
    }
  })

  it('gives no hint for other symbols, other forms, or an answer that is not empty', async () => {
    for (const query of ['symbol=BTC', 'symbol=NOPE', 'symbols=ETH/BTC', 'symbol=ETH/', 'symbol=A/B/C', 'quote=ETH&base=BTC']) {
      const response = await fetch(`${server.url}/prices?${query}`)
      expect(response.status, query).toBe(200)
      expect(response.headers.get('x-price-store-hint'), query).toBeNull()
    }
  })

  it('answers a stored ETH/BTC as any symbol, with no hint', async () => {
    const own = await PriceStore.open(new MemoryLevel(), { provider: PROVIDER })
    const ownServer = await serve(own)
    try {
      const record = { id: 'pair-1', symbol: 'ETH/BTC', provider: PROVIDER.id, value: 0.05, signature: 'c2ln', permawebTx: 'tx', version: '0.4', source: {}, timestamp: END }
      await own.putMany([record])
      const response = await fetch(`${ownServer.url}/prices?symbol=ETH/BTC`)
      expect(((await response.json()) as { id: string }[]).map((answer) => answer.id)).toEqual(['pair-1'])
      expect(response.headers.get('x-price-store-hint')).toBeNull()
      const before = await fetch(`${ownServer.url}/prices?symbol=ETH/BTC&toTimestamp=${END - 1}`)
      expect(await before.text()).toBe('[]')
      expect(before.headers.get('x-price-store-hint')).toBeNull()
    } finally {
      await ownServer.close()
      await own.close()
    }
  })
})
