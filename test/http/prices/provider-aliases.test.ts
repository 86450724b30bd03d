/**
 * Provider aliases (issue 13): RedStone's fluent query builder,
 * `redstone.query()...exec({ provider })`, asks for the provider its token
 * list ranks first (`redstone-rapid` for AR, BTC and ETH), whatever
 * provider it is given. A store configured with that name as an alias of
 * its own provider answers it; without the alias it is the coded 400.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { MemoryLevel } from 'memory-level'
import redstone from 'redstone-api'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RunningServer } from '../../../src/adapters/http/node.js'
import type { DemoRecord } from '../../../src/demo/demo-data.js'
import { DEFAULT_LIMITS, PriceStore, isPriceStoreError } from '../../../src/index.js'
import { parseQuery, type ProviderNames } from '../../../src/engine.js'
import { END, PROVIDER, demoRecords, newestFirst, serve } from '../../support/http/demo-server.js'

const WITH_ALIAS: ProviderNames = { ...PROVIDER, aliases: ['redstone-rapid'] }
const HOUR = 3_600_000

let records: DemoRecord[]
const stores: PriceStore[] = []
const servers: RunningServer[] = []

/** A server on a store of the demo records, its provider configured as `provider`; resolves with the client's `cacheApiUrl`. */
async function serveDemo(provider: ProviderNames): Promise<string> {
  const store = await PriceStore.open(new MemoryLevel(), { provider })
  stores.push(store)
  await store.putMany(records)
  const server = await serve(store)
  servers.push(server)
  return `${server.url}/prices`
}

let aliased: string
let plain: string

beforeAll(async () => {
  records = demoRecords()
  aliased = await serveDemo(WITH_ALIAS)
  plain = await serveDemo(PROVIDER)
})

afterAll(async () => {
  await Promise.all(servers.map((server) => server.close()))
  await Promise.all(stores.map((store) => store.close()))
})

/** What the client hands its user for a stored record (it drops `version` and `signature`). */
function userFacing(record: DemoRecord, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const { version: _version, signature: _signature, ...rest } = record
  return { ...rest, ...extra }
}
const withMinutes = (record: DemoRecord) => userFacing(record, { minutes: Math.floor(record.timestamp / 60_000) % 60 })
const latestOf = (symbol: string) => newestFirst(records, symbol)[0]!

describe('redstone.query() against a store with the alias "redstone-rapid"', () => {
  const exec = <T>(query: { exec(config: { provider: string; cacheApiUrl: string }): Promise<T> }) =>
    query.exec({ provider: PROVIDER.name, cacheApiUrl: aliased })

  it('.symbol(s).latest(): the latest price', async () => {
    expect(await exec(redstone.query().symbol('AR').latest())).toEqual(userFacing(latestOf('AR')))
  })

  it('.symbols([...]).latest(): the latest of several', async () => {
    expect(await exec(redstone.query().symbols(['BTC', 'ETH']).latest())).toEqual({
      BTC: userFacing(latestOf('BTC')),
      ETH: userFacing(latestOf('ETH')),
    })
  })

  it('.symbol(s).atDate(date) and .symbols([...]).atDate(date): the price at or before the date', async () => {
    const target = newestFirst(records, 'AR')[100]!
    expect(await exec(redstone.query().symbol('AR').atDate(target.timestamp + 5))).toEqual(userFacing(target))
    expect(await exec(redstone.query().symbol('AR').atDate(new Date(target.timestamp).toISOString()))).toEqual(userFacing(target))
    const several = await exec(redstone.query().symbols(['AR', 'BTC']).atDate(target.timestamp))
    expect(several).toEqual({ AR: userFacing(target), BTC: userFacing(newestFirst(records, 'BTC').find((r) => r.timestamp <= target.timestamp)!) })
  })

  it('.symbol(s).hoursAgo(n): the price n hours before now (the demo data is older: its latest)', async () => {
    expect(await exec(redstone.query().symbol('BTC').hoursAgo(1))).toEqual(userFacing(latestOf('BTC')))
  })

  it('.symbol(s).fromDate(a).toDate(b) under a day: every record in between, oldest first (the client asks interval=1)', async () => {
    const ar = newestFirst(records, 'AR').reverse()
    const [from, to] = [ar[10]!.timestamp, ar[40]!.timestamp]
    expect(await exec(redstone.query().symbol('AR').fromDate(from).toDate(to))).toEqual(ar.slice(10, 41).map(withMinutes))
  })

  it('.symbol(s).fromDate(a).toDate(b) over a day, and .forLastDays(n): hourly prices (interval=3600000)', async () => {
    const hourly = (symbol: string) => {
      const buckets = new Map<number, DemoRecord>()
      for (const record of newestFirst(records, symbol).reverse()) buckets.set(Math.floor(record.timestamp / HOUR), record)
      return [...buckets.values()].map(withMinutes)
    }
    expect(await exec(redstone.query().symbol('ETH').fromDate(END - 48 * HOUR).toDate(END))).toEqual(hourly('ETH'))
    const days = Math.ceil((Date.now() - END) / (24 * HOUR)) + 1
    expect(await exec(redstone.query().symbol('BTC').forLastDays(days))).toEqual(hourly('BTC'))
  })

  it('.allSymbols().latest(): every symbol (asked with the provider given, alias or not)', async () => {
    const all = await exec(redstone.query().allSymbols().latest())
    expect(Object.keys(all).sort()).toEqual(['AR', 'BTC', 'ETH', 'USDC.e', 'stETH'])
  })
})

describe('the same builder calls against a store without the alias', () => {
  it('each asks for "redstone-rapid" and gets the coded 400 PRICE_UNSUPPORTED_PROVIDER', async () => {
    const config = { provider: PROVIDER.name, cacheApiUrl: plain }
    const calls = [
      () => redstone.query().symbol('AR').latest().exec(config),
      () => redstone.query().symbols(['BTC', 'ETH']).latest().exec(config),
      () => redstone.query().symbol('AR').atDate(END - HOUR).exec(config),
      () => redstone.query().symbol('AR').fromDate(END - HOUR).toDate(END).exec(config),
    ]
    for (const call of calls) {
      const err = (await call().then(
        () => undefined,
        (rejected: unknown) => rejected,
      )) as { response?: { status: number; data: unknown }; config?: { params?: { provider?: string } } } | undefined
      expect(err?.config?.params?.provider).toBe('redstone-rapid')
      expect(err?.response?.status).toBe(400)
      expect(err?.response?.data).toEqual({
        error: { code: 'PRICE_UNSUPPORTED_PROVIDER', message: expect.stringContaining('"redstone-rapid"') },
      })
    }
  })
})

describe('the aliases option', () => {
  it('accepts the alias beside the name and id, and names the aliases when refusing another provider', () => {
    const config = { provider: { ...PROVIDER, aliases: ['redstone-rapid', 'rs'] }, limits: DEFAULT_LIMITS }
    for (const provider of [PROVIDER.name, PROVIDER.id, 'redstone-rapid', 'rs']) {
      expect(parseQuery({ symbol: 'AR', provider }, config)).toMatchObject({ kind: 'latest', symbol: 'AR' })
    }
    expect(() => parseQuery({ symbol: 'AR', provider: 'redstone-avalanche' }, config)).toThrow(
      expect.objectContaining({ code: 'PRICE_UNSUPPORTED_PROVIDER', message: expect.stringContaining('also named "redstone-rapid", "rs"') }),
    )
    expect(() => parseQuery({ symbol: 'AR', provider: 'redstone-rapid' }, { provider: PROVIDER, limits: DEFAULT_LIMITS })).toThrow(
      expect.objectContaining({ code: 'PRICE_UNSUPPORTED_PROVIDER' }),
    )
  })

  it('must be an array of non-empty strings', async () => {
    for (const aliases of ['redstone-rapid', [''], [5], null, {}]) {
      const opened = PriceStore.open(new MemoryLevel(), { provider: { ...PROVIDER, aliases: aliases as never } })
      await expect(opened).rejects.toSatisfy((err) => isPriceStoreError(err, 'PRICE_INVALID_OPTIONS') && err.message.includes('provider.aliases'))
    }
  })

  it('is not part of the store\'s identity: a database opens with other aliases, or none, and records keep the provider\'s id and key', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'price-store-aliases-'))
    try {
      const first = await PriceStore.open(join(dir, 'db'), { provider: WITH_ALIAS })
      await first.putMany(records.slice(0, 10))
      await first.close()
      for (const provider of [PROVIDER, { ...PROVIDER, aliases: ['another'] }]) {
        const again = await PriceStore.open(join(dir, 'db'), { provider })
        const [latest] = await again.query({ symbol: records[0]!.symbol, provider: PROVIDER.name }) as { provider: string; providerPublicKey: string }[]
        expect(latest).toMatchObject({ provider: PROVIDER.id, providerPublicKey: PROVIDER.publicKey })
        await again.close()
      }
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })
})
