/**
 * store.feeds(): every field of every feed against a naive model computed
 * here from the records the test wrote (count, first, last, decimals,
 * heartbeat, verdicts, status at an injected `now`), on a store with sealed
 * hours (written, closed, reopened), open hours, and an hour both sealed
 * and open (late records after the reopen); pages that cover the catalogue
 * with no gap and no repeat, under a status filter too; the catalogue kept
 * between commits and read again after one (and after a prune, which
 * commits nothing); bad options refused with PRICE_INVALID_QUERY naming the
 * option.
 */
import { MemoryLevel } from 'memory-level'
import { afterEach, describe, expect, it } from 'vitest'
import { DEMO_SIGNER, demoLiteSignature } from '../../src/demo/demo-key.js'
import { PriceStore, type NewPriceRecord, type PriceRecord } from '../../src/index.js'
import { FEED_SAMPLE, decimalPlaces, feedBuilds, heartbeatOf, type FeedCatalogue, type FeedEntry, type FeedOptions } from '../../src/store/services/feeds.js'
import { T0, TEST_PROVIDER, makeRecord } from '../../src/testing/records.js'
import { compareUtf8, storedRecords } from '../../src/testing/reference-model.js'

const HOUR = 3_600_000
const DAY = 24 * HOUR
const SIGNATURES = { policy: 'flag', evmSigners: [DEMO_SIGNER], threads: 1 } as const
const stores: PriceStore[] = []

afterEach(async () => {
  for (const store of stores.splice(0)) await store.close()
})

async function open(db: MemoryLevel<string, string>, signatures?: typeof SIGNATURES): Promise<PriceStore> {
  const store = await PriceStore.open(db as never, { provider: TEST_PROVIDER, ...(signatures === undefined ? {} : { signatures }) })
  stores.push(store)
  return store
}

/** A record at `timestamp` with `value`, lite-signed by the demo key; `bad`: a wrong value signed; `none`: the made-up Arweave signature only. */
function record(symbol: string, timestamp: number, value: number, sign: 'good' | 'bad' | 'none' = 'good', id?: string): NewPriceRecord {
  const base = makeRecord({ symbol, timestamp, value, ...(id === undefined ? {} : { id }) })
  if (sign === 'none') return base
  // Signed by the EVM kind only: no Arweave signature (the made-up one would fail).
  const { signature: _arweave, ...rest } = base
  return { ...rest, liteEvmSignature: demoLiteSignature({ symbol, timestamp, value: sign === 'good' ? value : value + 1 }) }
}

/**
 * The writes: per symbol its own cadence, values with their own number of decimals, a timestamp shared by two
 * records (two ids), and some hours apart; `ZZZ` has one record only (no heartbeat), `OLD` stopped long ago.
 */
function firstWrites(): NewPriceRecord[] {
  const writes: NewPriceRecord[] = []
  const cadence: Record<string, number> = { AR: 10_000, BTC: 60_000, ETH: 7_000, 'Ü-USD': 30_000, OLD: 1_000 }
  for (const [symbol, every] of Object.entries(cadence)) {
    const start = symbol === 'OLD' ? T0 - 30 * DAY : T0
    for (let i = 0; i < 50; i++) {
      const decimals = symbol === 'BTC' ? 2 : symbol === 'ETH' ? 5 : symbol === 'OLD' ? 0 : 3
      const value = Number((1000 + i * 1.2345678).toFixed(decimals))
      // Hours apart: the records of each symbol span two or three hours (sealed chunks once the store is closed).
      const timestamp = start + i * every + (i >= 25 ? HOUR : 0)
      writes.push(record(symbol, timestamp, value, i % 7 === 3 ? 'bad' : 'good'))
    }
  }
  writes.push(record('ZZZ', T0 + 5 * HOUR, 0.000015, 'none'))
  return writes
}

/** After the reopen: new records in a new (open) hour, late ones into a sealed hour, a second id at one timestamp, unsigned ones. */
function laterWrites(): NewPriceRecord[] {
  const writes: NewPriceRecord[] = []
  for (let i = 0; i < 12; i++) writes.push(record('AR', T0 + 3 * HOUR + i * 10_000, Number((2000 + i / 8).toFixed(3)), i % 5 === 0 ? 'none' : 'good'))
  writes.push(record('AR', T0 + 3 * HOUR + 110_000, 2001.5, 'good', 'second-id-at-a-shared-timestamp'))
  // Late: into BTC's sealed first hour, between its records (a sealed and open hour).
  for (let i = 0; i < 5; i++) writes.push(record('BTC', T0 + i * 60_000 + 30_000, 999.125, 'good'))
  writes.push(record('ETH', T0 + 2 * HOUR, 1.1, 'none'))
  // Binary noise (0.30000000000000004) is not a decimal place.
  writes.push(record('Ü-USD', T0 + 2 * HOUR, 0.1 + 0.2, 'none'))
  return writes
}

/** A naive model of a feed from the stored records, the verdicts as `store.verify()` names them. */
async function modelFeed(store: PriceStore, records: readonly PriceRecord[], symbol: string, now: number, staleAfter: number, retiredAfter: number): Promise<FeedEntry> {
  const own = records.filter((r) => r.symbol === symbol).sort((a, b) => a.timestamp - b.timestamp || compareUtf8(a.id, b.id))
  const sample = own.slice(-FEED_SAMPLE)
  // Naive: the fewest decimal places that write the value back exactly, once rounded to 15 significant digits.
  const places = (value: number): number => {
    const kept = Number(value.toPrecision(15))
    let k = 0
    while (k < 100 && Number(kept.toFixed(k)) !== kept) k++
    return k
  }
  const distinct = [...new Set(sample.map((r) => r.timestamp))]
  const gaps = distinct.slice(1).map((t, i) => t - distinct[i]!).sort((a, b) => a - b)
  const heartbeat = gaps.length === 0 ? null : gaps[Math.ceil(gaps.length / 2) - 1]!
  const last = own[own.length - 1]!.timestamp
  const age = now - last
  const status = age > retiredAfter ? 'retired' : heartbeat !== null && age <= staleAfter * heartbeat ? 'live' : 'stale'
  const report = await store.verify({ symbols: [symbol], limit: 10_000 })
  const failing = new Map(report.failing.map((f) => [`${f.timestamp}:${f.id}`, f.verdict.overall]))
  const verdicts = { valid: 0, unsigned: 0, invalid: 0, malformed: 0, 'signer-not-allowed': 0, unchecked: 0 }
  // A record verify() does not list failing is valid, unless no verdict was kept for it (unchecked): count those from the report.
  let unlistedValid = 0
  for (const r of sample) {
    const kind = failing.get(`${r.timestamp}:${r.id}`)
    if (kind === undefined) unlistedValid++
    else verdicts[kind]++
  }
  // The sample's unchecked records: those verify() counts unchecked within the sample's window.
  const windowed = await store.verify({ symbols: [symbol], from: sample[0]!.timestamp, to: last, limit: 0 })
  verdicts.unchecked = windowed.stored.unchecked
  verdicts.valid = unlistedValid - windowed.stored.unchecked
  return {
    symbol, status, decimals: Math.max(...sample.map((r) => places(r.value as number))), records: own.length,
    firstTimestamp: own[0]!.timestamp, lastTimestamp: last, age, heartbeat, staleAfterMs: heartbeat === null ? null : staleAfter * heartbeat,
    sample: sample.length, verdicts,
    sources: [{ provider: TEST_PROVIDER.id, service: null, signers: [DEMO_SIGNER.toLowerCase()] }],
  }
}

/** Every page of the catalogue, following `next`. */
async function allPages(store: PriceStore, options: FeedOptions): Promise<{ feeds: FeedEntry[]; pages: FeedCatalogue[] }> {
  const pages: FeedCatalogue[] = []
  let cursor = ''
  for (;;) {
    const page = await store.feeds({ ...options, cursor })
    pages.push(page)
    if (page.next === null) break
    expect(page.feeds.length).toBe(options.limit ?? 100)
    cursor = page.next
  }
  return { feeds: pages.flatMap((page) => page.feeds), pages }
}

/** A store with sealed hours (written, closed, reopened), then late and new records (open hours, one both sealed and open). */
async function layeredStore(): Promise<{ store: PriceStore; writes: NewPriceRecord[] }> {
  const db = new MemoryLevel<string, string>()
  const first = await open(db, SIGNATURES)
  await first.putMany(firstWrites())
  await first.close()
  // Verification off for a while: those records are unchecked.
  const plain = await open(db)
  const unchecked = [record('BTC', T0 + 6 * HOUR, 1234.5, 'good')]
  await plain.putMany(unchecked)
  await plain.close()
  const store = await open(db, SIGNATURES)
  expect((await store.stats()).unsealedRecords).toBe(0)
  const later = laterWrites()
  await store.putMany(later)
  const stats = await store.stats()
  expect(stats.unsealedRecords).toBeGreaterThan(0)
  return { store, writes: [...firstWrites(), ...unchecked, ...later] }
}

describe('store.feeds()', () => {
  it('gives every field of every feed as a naive model computes it from the records written, at an injected now', async () => {
    const { store, writes } = await layeredStore()
    const records = storedRecords(writes, TEST_PROVIDER)
    const symbols = [...new Set(records.map((r) => r.symbol))].sort(compareUtf8)
    for (const [now, staleAfter, retiredAfter] of [[T0 + 6 * HOUR + 5_000, 3, 7 * DAY], [T0 + 6 * HOUR + 400_000, 2.5, 2 * HOUR], [T0 + 40 * DAY, 3, 7 * DAY]] as const) {
      const options = { now, ...(staleAfter === 3 ? {} : { staleAfter }), ...(retiredAfter === 7 * DAY ? {} : { retiredAfter }) }
      const page = await store.feeds({ ...options, limit: 1000 })
      const model = await Promise.all(symbols.map((symbol) => modelFeed(store, records, symbol, now, staleAfter, retiredAfter)))
      expect(page.feeds).toEqual(model)
      expect(page).toMatchObject({ position: store.position, now, staleAfter, retiredAfter, total: symbols.length, next: null })
      expect(page.providers).toEqual([{ name: TEST_PROVIDER.name, id: TEST_PROVIDER.id, publicKey: TEST_PROVIDER.publicKey }])
      expect(JSON.parse(JSON.stringify(page))).toEqual(page)
    }
    // Not vacuous: every status and verdict kind, several decimals and a feed without a heartbeat occur.
    const statuses = new Set<string>()
    for (const now of [T0 + 6 * HOUR + 5_000, T0 + 40 * DAY]) for (const feed of (await store.feeds({ now })).feeds) statuses.add(feed.status)
    expect([...statuses].sort()).toEqual(['live', 'retired', 'stale'])
    const feeds = (await store.feeds({ now: T0 })).feeds
    expect(new Set(feeds.map((f) => f.decimals)).size).toBeGreaterThanOrEqual(4)
    expect(feeds.find((f) => f.symbol === 'ZZZ')).toMatchObject({ heartbeat: null, status: 'stale', decimals: 6, sample: 1 })
    const totals = feeds.reduce((sum, f) => ({ valid: sum.valid + f.verdicts.valid, invalid: sum.invalid + f.verdicts.invalid, unchecked: sum.unchecked + f.verdicts.unchecked }), { valid: 0, invalid: 0, unchecked: 0 })
    expect(totals.valid).toBeGreaterThan(0)
    expect(totals.invalid).toBeGreaterThan(0)
    expect(totals.unchecked).toBeGreaterThan(0)
  })

  it('pages through the catalogue with no gap and no repeat, with and without a status filter', async () => {
    const { store } = await layeredStore()
    const now = T0 + 6 * HOUR + 5_000
    const whole = (await store.feeds({ now, limit: 1000 })).feeds
    for (const limit of [1, 2, 3, 7]) {
      const { feeds, pages } = await allPages(store, { now, limit })
      expect(feeds).toEqual(whole)
      expect(pages.length).toBe(Math.ceil(whole.length / limit))
    }
    for (const status of ['live', 'stale', 'retired'] as const) {
      const { feeds } = await allPages(store, { now, limit: 1, status })
      expect(feeds).toEqual(whole.filter((f) => f.status === status))
    }
    // A cursor is a place in the symbol order, not a page: symbols written between pages that sort after it appear, none twice.
    const first = await store.feeds({ now, limit: 2 })
    await store.putMany([record('AAA', T0, 1), record('ZZZZ', T0, 1)])
    const rest = await allPages(store, { now, limit: 2 })
    const after = (await allPages(store, { now, limit: 2 })).feeds.filter((f) => compareUtf8(f.symbol, first.next!) > 0)
    const resumed: FeedEntry[] = []
    for (let cursor = first.next; cursor !== null;) {
      const page = await store.feeds({ now, limit: 2, cursor })
      resumed.push(...page.feeds)
      cursor = page.next
    }
    expect(resumed.map((f) => f.symbol)).toEqual(after.map((f) => f.symbol))
    expect(resumed.map((f) => f.symbol)).toContain('ZZZZ')
    expect(rest.feeds.map((f) => f.symbol)).toContain('AAA')
    // A cursor past the last symbol: an empty last page.
    expect(await store.feeds({ now, cursor: '\u{10FFFF}' })).toMatchObject({ feeds: [], next: null })
  })

  it('keeps the catalogue between commits and reads it again after a commit or a prune', async () => {
    const db = new MemoryLevel<string, string>()
    const store = await open(db)
    await store.putMany([record('AR', T0, 1, 'none'), record('AR', T0 + 10_000, 1, 'none'), record('BTC', T0 + HOUR, 2, 'none')])
    const builds = feedBuilds.count
    const first = await store.feeds({ now: T0 })
    expect(feedBuilds.count).toBe(builds + 1)
    // Between commits: the kept catalogue, whatever the page, clock or thresholds.
    await store.feeds({ now: T0 + DAY, limit: 1, status: 'retired', staleAfter: 10 })
    await Promise.all([store.feeds(), store.feeds({ cursor: 'AR' })])
    expect(feedBuilds.count).toBe(builds + 1)
    // A commit: read again.
    await store.putMany([record('AR', T0 + 20_000, 1.25, 'none')])
    const second = await store.feeds({ now: T0 })
    expect(feedBuilds.count).toBe(builds + 2)
    expect(second.position).toBe(first.position + 1)
    expect(second.feeds[0]).toMatchObject({ symbol: 'AR', records: 3, lastTimestamp: T0 + 20_000, decimals: 2 })
    // Concurrent requests after a commit share one read.
    await store.putMany([record('AR', T0 + 30_000, 1, 'none')])
    await Promise.all(Array.from({ length: 5 }, () => store.feeds()))
    expect(feedBuilds.count).toBe(builds + 3)
    // A commit while a read is under way: the call after it answers the new position, whichever read it waited for.
    const during = store.feeds()
    const commit = store.putBatch([record('BTC', T0 + HOUR + 60_000, 2, 'none')])
    const afterCommit = store.feeds()
    const [, { position }, answered] = await Promise.all([during, commit, afterCommit])
    expect((await store.feeds()).position).toBe(position)
    expect(answered.position).toBeLessThanOrEqual(position)
    expect(feedBuilds.count).toBeLessThanOrEqual(builds + 5)
    // A prune commits nothing, yet removes records: read again.
    await store.prune({ before: T0 + HOUR })
    const before = feedBuilds.count
    const pruned = await store.feeds({ now: T0 })
    expect(feedBuilds.count).toBe(before + 1)
    expect(pruned.feeds.map((f) => f.symbol)).toEqual(['BTC'])
    expect(pruned.feeds[0]).toMatchObject({ records: 2 })
    expect(pruned.position).toBe(second.position + 2)
  })

  it('refuses bad options with PRICE_INVALID_QUERY naming the option, and a closed store with PRICE_NOT_OPEN', async () => {
    const store = await open(new MemoryLevel<string, string>())
    await store.putMany([record('AR', T0, 1, 'none')])
    for (const [options, parameter] of [
      [{ limit: 0 }, 'limit'], [{ limit: 1001 }, 'limit'], [{ limit: 1.5 }, 'limit'], [{ limit: '10' }, 'limit'],
      [{ cursor: 5 }, 'cursor'], [{ status: 'dead' }, 'status'], [{ now: Number.NaN }, 'now'], [{ now: 1.5 }, 'now'],
      [{ staleAfter: 0 }, 'staleAfter'], [{ staleAfter: Number.POSITIVE_INFINITY }, 'staleAfter'], [{ staleAfter: '3' }, 'staleAfter'],
      [{ retiredAfter: 0 }, 'retiredAfter'], [{ retiredAfter: 2.5 }, 'retiredAfter'],
    ] as const) {
      await expect(store.feeds(options as never)).rejects.toMatchObject({ code: 'PRICE_INVALID_QUERY', details: { parameter } })
    }
    await expect(store.feeds('x' as never)).rejects.toMatchObject({ code: 'PRICE_INVALID_QUERY' })
    const aborted = new AbortController()
    aborted.abort()
    await expect(store.feeds({ signal: aborted.signal })).rejects.toMatchObject({ code: 'PRICE_ABORTED' })
    await store.feeds()
    await store.close()
    await expect(store.feeds()).rejects.toMatchObject({ code: 'PRICE_NOT_OPEN' })
  })

  it('answers an empty store with an empty catalogue', async () => {
    const store = await open(new MemoryLevel<string, string>())
    expect(await store.feeds({ now: T0 })).toEqual({
      position: 0, now: T0, staleAfter: 3, retiredAfter: 7 * DAY, total: 0,
      providers: [{ name: TEST_PROVIDER.name, id: TEST_PROVIDER.id, publicKey: TEST_PROVIDER.publicKey }], feeds: [], next: null,
    })
  })
})

describe('the feed catalogue\'s definitions', () => {
  it('counts decimal places in the shortest form of at most 15 significant digits', () => {
    expect([65_000, 0.25, 1e-7, 1.5e-7, 1e21, 0.1 + 0.2, 10 + 7 / 100, -3.125, 0, Number.NaN, Number.POSITIVE_INFINITY].map(decimalPlaces))
      .toEqual([0, 2, 7, 8, 0, 1, 2, 3, 0, 0, 0])
  })

  it('takes the heartbeat as the lower median gap between distinct timestamps', () => {
    expect(heartbeatOf([])).toBeNull()
    expect(heartbeatOf([5, 5, 5])).toBeNull()
    expect(heartbeatOf([40, 30, 10, 0])).toBe(10) // gaps 10, 20, 10
    expect(heartbeatOf([0, 10, 10, 30, 60, 100])).toBe(20) // gaps 10, 20, 30, 40: the lower median
  })
})
