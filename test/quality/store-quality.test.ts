/**
 * `store.quality()` on hand-made feeds: a steady feed with an outage, a
 * stale feed, duplicates, buckets, sources, the fast path (`moves: false`)
 * over sealed, late and open hours, and bad input.
 */
import { MemoryLevel } from 'memory-level'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { PriceStore } from '../../src/index.js'
import { TEST_PROVIDER, referenceQuality, storedRecords } from '../../src/testing/index.js'
import { rec } from '../support/records.js'

const BASE = Date.UTC(2026, 0, 1)
const STEP = 10_000
const HOUR = 3_600_000

let db: MemoryLevel
let store: PriceStore

beforeEach(async () => {
  db = new MemoryLevel()
  store = await PriceStore.open(db as never, { provider: TEST_PROVIDER })
})
afterEach(async () => {
  await store.close()
})

/** A record of `symbol` every 10 s over `from..to`, skipping `holes`, values rising by 1. */
function steady(symbol: string, from: number, to: number, holes: readonly [number, number][] = []) {
  const out = []
  for (let t = from, i = 0; t <= to; t += STEP, i++) {
    if (holes.some(([lo, hi]) => t >= lo && t <= hi)) continue
    out.push(rec({ symbol, timestamp: t, value: 100 + i, id: `${symbol}-${t}` }))
  }
  return out
}

describe('store.quality', () => {
  it('reports a steady feed with one outage: the gap, its start and length, the heartbeat, the age', async () => {
    const outage: [number, number] = [BASE + 30 * 60_000, BASE + 40 * 60_000]
    await store.putMany(steady('BTC', BASE, BASE + 2 * HOUR - STEP, [outage]))
    const report = await store.quality({ from: BASE, to: BASE + 3 * HOUR, now: BASE + 2 * HOUR + 50_000 })
    const [btc] = report.symbols
    expect(report.gapThreshold).toBeNull()
    expect(btc).toMatchObject({
      symbol: 'BTC',
      records: 720 - 61,
      firstTimestamp: BASE,
      lastTimestamp: BASE + 2 * HOUR - STEP,
      age: 60_000,
      gaps: { count: 720 - 62, median: STEP, p99: STEP, max: 620_000, threshold: 30_000, over: 1, truncated: false },
      duplicates: { records: 0, timestamps: 0, list: [] },
    })
    expect(btc!.gaps.list).toEqual([{ start: outage[0] - STEP, end: outage[1] + STEP, length: 620_000 }])
    // Values rise by 1 a record, so the largest move is the one over the outage (62 steps of 1).
    expect(btc!.moves!.largest[0]).toMatchObject({ change: 62, from: { id: `BTC-${outage[0] - STEP}` }, to: { id: `BTC-${outage[1] + STEP}` } })
  })

  it('lists records sharing a timestamp (the key is symbol, timestamp and id) and counts a rewrite of a key once', async () => {
    await store.putMany([rec({ id: 'a', timestamp: BASE }), rec({ id: 'b', timestamp: BASE }), rec({ id: 'a', timestamp: BASE, value: 1 }), rec({ id: 'c', timestamp: BASE + STEP })])
    const [btc] = (await store.quality({ from: BASE, to: BASE + HOUR, now: BASE })).symbols
    expect(btc!.records).toBe(3)
    expect(btc!.duplicates).toEqual({ records: 1, timestamps: 1, list: [{ timestamp: BASE, ids: ['a', 'b'] }], truncated: false })
    expect(btc!.gaps.count).toBe(1)
  })

  it('names an unknown symbol with no records, and every stored symbol in the store order when none is named', async () => {
    await store.putMany([rec({ symbol: 'ETH', timestamp: BASE }), rec({ symbol: 'BTC', timestamp: BASE })])
    const named = await store.quality({ symbols: ['DOGE'], from: BASE, to: BASE, now: BASE })
    expect(named.symbols).toEqual([
      expect.objectContaining({ symbol: 'DOGE', records: 0, firstTimestamp: null, lastTimestamp: null, age: null, gaps: expect.objectContaining({ count: 0, median: null, threshold: null }) }),
    ])
    expect((await store.quality({ from: BASE, to: BASE, now: BASE })).symbols.map((s) => s.symbol)).toEqual(['BTC', 'ETH'])
  })

  it('gives every bucket, empty ones too, with the gap counted where the feed came back', async () => {
    await store.putMany(steady('BTC', BASE, BASE + HOUR - STEP, [[BASE + 10 * 60_000, BASE + 30 * 60_000 - STEP]]))
    const [btc] = (await store.quality({ from: BASE, to: BASE + HOUR - 1, now: BASE + HOUR, interval: 10 * 60_000, gapThreshold: 60_000 })).symbols
    expect(btc!.buckets!.map((b) => [b.records, b.gaps.over, b.gaps.max])).toEqual([[60, 0, STEP], [0, 0, null], [0, 0, null], [60, 1, 20 * 60_000 + STEP], [60, 0, STEP], [60, 0, STEP]])
  })

  it('summarises sources when asked: counts, single-source records, the widest spread', async () => {
    await store.putMany([
      rec({ id: 'one', timestamp: BASE, value: 100, source: { binance: 100 } }),
      rec({ id: 'wide', timestamp: BASE + STEP, value: 100, source: { binance: 90, kraken: 110, okx: 'error' } }),
      rec({ id: 'none', timestamp: BASE + 2 * STEP, value: 100, source: {} }),
    ])
    const [btc] = (await store.quality({ from: BASE, to: BASE + HOUR, now: BASE, sources: true })).symbols
    expect(btc!.sources).toEqual({
      counts: { 0: 1, 1: 1, 2: 1 },
      singleSource: 1,
      singleSourceRecords: [{ id: 'one', timestamp: BASE }],
      widest: { id: 'wide', timestamp: BASE + STEP, value: 100, min: 90, max: 110, spread: 0.2 },
    })
    expect((await store.quality({ from: BASE, to: BASE + HOUR, now: BASE })).symbols[0]!.sources).toBeUndefined()
  })

  it('reads the same with moves: false over sealed hours, late records (delta parts) and open rows', async () => {
    const inputs = [...steady('BTC', BASE, BASE + 5 * HOUR, [[BASE + HOUR, BASE + 2 * HOUR]]), ...steady('ETH', BASE, BASE + 3 * HOUR)]
    await store.putMany(inputs)
    await store.close()
    store = await PriceStore.open(db as never, { provider: TEST_PROVIDER })
    // Late records into a sealed hour, a rewrite of a sealed record, and a new open hour.
    const late = [rec({ symbol: 'BTC', timestamp: BASE + HOUR + 5, id: 'late' }), rec({ symbol: 'BTC', timestamp: BASE, id: `BTC-${BASE}`, value: 7 }), ...steady('BTC', BASE + 6 * HOUR, BASE + 6 * HOUR + 5 * STEP)]
    await store.putMany(late)
    const all = storedRecords([...inputs, ...late], TEST_PROVIDER)
    const cases = [
      { from: BASE, to: BASE + 7 * HOUR, now: BASE + 7 * HOUR, moves: false },
      { from: BASE + 30 * 60_000, to: BASE + 6 * HOUR + 2 * STEP, now: BASE, moves: false, interval: HOUR },
      { from: BASE, to: BASE + 7 * HOUR, now: BASE + 7 * HOUR },
    ]
    for (const options of cases) expect(await store.quality(options)).toEqual(referenceQuality(all, options))
    // Closing seals the late rows: the rewrite of hour 0 joins its chunk as a delta part, read with the key column.
    await store.close()
    store = await PriceStore.open(db as never, { provider: TEST_PROVIDER })
    for (const options of cases) expect(await store.quality(options)).toEqual(referenceQuality(all, options))
  })

  it('measures ages from Date.now() when no now is given', async () => {
    await store.put(rec({ timestamp: BASE }))
    const before = Date.now()
    const report = await store.quality({ from: BASE, to: BASE })
    expect(report.now).toBeGreaterThanOrEqual(before)
    expect(report.symbols[0]!.age).toBe(report.now - BASE)
  })

  it.each([
    [{ to: BASE }, 'PRICE_INVALID_RANGE', 'from'],
    [{ from: BASE }, 'PRICE_INVALID_RANGE', 'to'],
    [{ from: BASE + 1, to: BASE }, 'PRICE_INVALID_RANGE', 'fromTimestamp'],
    [{ from: -1, to: BASE }, 'PRICE_INVALID_RANGE', 'from'],
    [{ from: 0, to: BASE, interval: 0 }, 'PRICE_INVALID_INTERVAL', 'interval'],
    [{ from: 0, to: BASE, origin: 5 }, 'PRICE_INVALID_INTERVAL', 'origin'],
    [{ from: 0, to: BASE, gapThreshold: 0 }, 'PRICE_INVALID_QUERY', 'gapThreshold'],
    [{ from: 0, to: BASE, now: 1.5 }, 'PRICE_INVALID_QUERY', 'now'],
    [{ from: 0, to: BASE, sources: 'yes' }, 'PRICE_INVALID_QUERY', 'sources'],
    [{ from: 0, to: BASE, moves: 0 }, 'PRICE_INVALID_QUERY', 'moves'],
    [{ from: 0, to: BASE, moves: false, sources: true }, 'PRICE_INVALID_QUERY', 'moves'],
    [{ from: 0, to: BASE, symbols: 'BTC' }, 'PRICE_INVALID_SYMBOL', 'symbols'],
    [{ from: 0, to: BASE, symbols: ['bad symbol'] }, 'PRICE_INVALID_SYMBOL', 'symbols'],
    [{ from: 0, to: BASE, symbols: ['BTC'], interval: 1 }, 'PRICE_RANGE_TOO_LARGE', 'interval'],
  ])('refuses %j with %s', async (options, code, parameter) => {
    await expect(store.quality(options as never)).rejects.toMatchObject({ code, details: { parameter } })
  })

  it('refuses buckets over maxRangePoints counted over the stored symbols, and a closed store, and an aborted signal', async () => {
    await store.putMany([rec({ symbol: 'A', timestamp: BASE }), rec({ symbol: 'B', timestamp: BASE })])
    // 6,000 buckets of one symbol pass; of both stored symbols, 12,000 do not.
    const options = { from: BASE, to: BASE + 6000 * 1000 - 1, interval: 1000, now: BASE }
    expect((await store.quality({ ...options, symbols: ['A'] })).symbols[0]!.buckets).toHaveLength(6000)
    await expect(store.quality(options)).rejects.toMatchObject({ code: 'PRICE_RANGE_TOO_LARGE', details: { count: 12_000, cap: 10_000 } })
    await expect(store.quality({ from: 0, to: 1, signal: AbortSignal.abort() })).rejects.toMatchObject({ code: 'PRICE_ABORTED' })
    await store.close()
    await expect(store.quality({ from: 0, to: 1 })).rejects.toMatchObject({ code: 'PRICE_NOT_OPEN' })
  })
})
