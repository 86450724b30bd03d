import redstone from 'redstone-api'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RunningServer } from '../../../src/adapters/http/node.js'
import type { DemoRecord } from '../../../src/demo/demo-data.js'
import type { PriceStore } from '../../../src/index.js'
import { PROVIDER, newestFirst, openDemoStore, serve } from '../../support/http/demo-server.js'

// RedStone's own client, unchanged, pointed at our server with `cacheApiUrl`,
// for its calls that take an explicit provider. It strips `version`,
// `signature` and `providerPublicKey` from what it returns. (Its query
// builder, `redstone.query()...exec()`, is left out: it picks a provider per
// token from its built-in token list, e.g. "redstone-rapid" for BTC, so it
// does not target one provider: provider-aliases.test.ts drives it against a
// store that lists that name as an alias.)

let store: PriceStore
let records: DemoRecord[]
let server: RunningServer
let api: InstanceType<typeof redstone.Api>
let cacheApiUrl: string
const provider = PROVIDER.name

beforeAll(async () => {
  ;({ store, records } = await openDemoStore())
  server = await serve(store)
  cacheApiUrl = `${server.url}/prices`
  api = new redstone.Api({ cacheApiUrl, defaultProvider: provider })
})

afterAll(async () => {
  await server?.close()
  await store?.close()
})

/** What the client hands its user for a stored record. */
function userFacing(record: DemoRecord, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const { version: _version, signature: _signature, ...rest } = record
  return { ...rest, ...extra }
}

const withMinutes = (record: DemoRecord): Record<string, unknown> =>
  userFacing(record, { minutes: Math.floor(record.timestamp / 60_000) % 60 })

describe('redstone-api against the server', () => {
  it('getPrice(symbol): the latest price', async () => {
    expect(await api.getPrice('BTC', { provider })).toEqual(userFacing(newestFirst(records, 'BTC')[0]!))
  })

  it('getPrice(symbol) with the provider given by id', async () => {
    expect(await api.getPrice('stETH', { provider: PROVIDER.id })).toEqual(userFacing(newestFirst(records, 'stETH')[0]!))
  })

  it('getPrice(symbol) of an unknown symbol rejects as "not found"', async () => {
    await expect(api.getPrice('NOPE', { provider })).rejects.toThrow(/NOPE/)
  })

  it('getPrice([symbols]): the latest price of several', async () => {
    const prices = await api.getPrice(['BTC', 'USDC.e', 'NOPE'], { provider })
    expect(prices).toEqual({
      BTC: userFacing(newestFirst(records, 'BTC')[0]!),
      'USDC.e': userFacing(newestFirst(records, 'USDC.e')[0]!),
    })
  })

  it('getAllPrices(): every symbol', async () => {
    const prices = await api.getAllPrices({ provider })
    expect(Object.keys(prices).sort()).toEqual(['AR', 'BTC', 'ETH', 'USDC.e', 'stETH'])
    for (const [symbol, price] of Object.entries(prices)) expect(price).toEqual(userFacing(newestFirst(records, symbol)[0]!))
  })

  it('getHistoricalPrice(symbol, {date}): the price at or before the date', async () => {
    const target = newestFirst(records, 'AR')[200]!
    expect(await api.getHistoricalPrice('AR', { date: target.timestamp + 5, provider })).toEqual(userFacing(target))
    expect(await api.getHistoricalPrice('AR', { date: new Date(target.timestamp), provider })).toEqual(userFacing(target))
  })

  it('getHistoricalPrice([symbols], {date}): several at a date', async () => {
    const target = newestFirst(records, 'ETH')[300]!
    const prices = await api.getHistoricalPrice(['ETH', 'AR'], { date: target.timestamp, provider })
    expect(prices).toEqual({
      ETH: userFacing(target),
      AR: userFacing(newestFirst(records, 'AR').find((record) => record.timestamp <= target.timestamp)!),
    })
  })

  it('getHistoricalPrice(symbol, {startDate, endDate, interval}): one price per interval, oldest first', async () => {
    const eth = newestFirst(records, 'ETH').reverse()
    const startDate = eth[0]!.timestamp
    const endDate = eth.at(-1)!.timestamp
    const prices = await api.getHistoricalPrice('ETH', { startDate, endDate, interval: 600_000, provider })
    const buckets = new Map<number, DemoRecord>()
    for (const record of eth) buckets.set(Math.floor(record.timestamp / 600_000), record)
    expect(prices).toEqual([...buckets.values()].map(withMinutes))
  })

  it('getHistoricalPrice(symbol, {startDate, endDate, interval, offset, limit}): a page of the range', async () => {
    const eth = newestFirst(records, 'ETH').reverse()
    const range = { startDate: eth[0]!.timestamp, endDate: eth.at(-1)!.timestamp, interval: 60_000, provider }
    const all = await api.getHistoricalPrice('ETH', range)
    expect(all).toHaveLength(120)
    expect(await api.getHistoricalPrice('ETH', { ...range, offset: 30, limit: 10 })).toEqual(all.slice(30, 40))
  })

  it('getHistoricalPrice(symbol, {offset, limit}): the latest N, newest first, after offset', async () => {
    const prices = await api.getHistoricalPrice('BTC', { offset: 10, limit: 5, provider })
    expect(prices).toEqual(newestFirst(records, 'BTC').slice(10, 15).map((record) => userFacing(record)))
  })

  it('an unsupported provider is an error the client surfaces', async () => {
    await expect(api.getPrice('BTC', { provider: 'redstone-rapid' })).rejects.toThrow(/400/)
  })
})
