/**
 * When late records are sealed (issue 20): an hour opened by records that
 * arrive after it was due (late records, a backfill) waits in the open area
 * until the open area is over `openBytes` (or a prune or `close()` seals
 * it), so its records join the chunks in a few large writes; hours a feed
 * opens in time are sealed as soon as they are due, late hours or not.
 *
 * Sealing runs in the background after each batch; the tests wait for it
 * by polling `stats().unsealedRecords` (a bounded number of event-loop
 * turns, no clock) until it reaches a value only the right policy can stop
 * at: hours are sealed oldest first, so with a wrong policy the late hour
 * would go before (or with) the due one and the count would skip past it.
 */
import { MemoryLevel } from 'memory-level'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { DEFAULT_LIMITS, PriceStore } from '../../src/index.js'
import { T0, TEST_PROVIDER, makeRecord, type InputRecord } from '../../src/testing/records.js'
import { referenceQuery, storedRecords } from '../../src/testing/reference-model.js'

const HOUR = 3_600_000
const CONFIG = { provider: TEST_PROVIDER, limits: DEFAULT_LIMITS }
const MINUTE = 60_000
const stores: PriceStore[] = []

afterEach(async () => {
  for (const store of stores.splice(0)) await store.close()
  vi.restoreAllMocks()
})

async function open(db: MemoryLevel<string, string>, openBytes?: number): Promise<PriceStore> {
  const store = await PriceStore.open(db as never, { provider: TEST_PROVIDER, ...(openBytes === undefined ? {} : { openBytes }) })
  stores.push(store)
  return store
}

/** Waits (event-loop turns, at most `turns`) until the store holds at most `most` unsealed records; returns how many it holds then. */
async function unsealedAtMost(store: PriceStore, most: number, turns = 20_000): Promise<number> {
  for (let turn = 0; turn < turns; turn++) {
    const { unsealedRecords } = await store.stats()
    if (unsealedRecords <= most) return unsealedRecords
    await new Promise((resolve) => setImmediate(resolve))
  }
  throw new Error(`still more than ${most} unsealed records after ${turns} turns`)
}

const record = (timestamp: number, id: string, value = 1): InputRecord => makeRecord({ symbol: 'BTC', timestamp, id, value })

describe('sealing late hours', () => {
  it('a late hour waits in the open area while a due hour written in time is sealed; close() seals it, and every answer is the model\'s', async () => {
    const db = new MemoryLevel<string, string>()
    const written: InputRecord[] = []
    let store = await open(db)
    const first = [...Array.from({ length: 20 }, (_, i) => record(T0 + i * MINUTE, `a${i}`)), record(T0 + HOUR + 11 * MINUTE, 'b0')]
    await store.putMany(first)
    written.push(...first)
    await store.close()
    stores.length = 0

    store = await open(db)
    // Hours 0 and 1 are sealed and over: a record for hour 0 now is late. Hour 2 opens in time, and hour 3's record makes it due.
    const late = [record(T0 + 30 * MINUTE + 1, 'late', 2)]
    const inTime = [...Array.from({ length: 5 }, (_, i) => record(T0 + 2 * HOUR + i * MINUTE, `c${i}`)), record(T0 + 3 * HOUR + 11 * MINUTE, 'd0')]
    await store.putMany(late)
    await store.putMany(inTime)
    written.push(...late, ...inTime)
    // Hour 2 sealed (5 records); the late record and hour 3's still open.
    expect(await unsealedAtMost(store, 2)).toBe(2)

    const asOf = { symbol: 'BTC', toTimestamp: String(T0 + 45 * MINUTE) }
    const stored = storedRecords(written, TEST_PROVIDER)
    expect({ answer: await store.query(asOf) }).toEqual(referenceQuery(stored, asOf, CONFIG))
    await store.close()
    stores.length = 0

    store = await open(db)
    expect((await store.stats()).unsealedRecords).toBe(0)
    for (const params of [asOf, { symbol: 'BTC', fromTimestamp: String(T0), toTimestamp: String(T0 + 4 * HOUR), interval: '60000' }]) {
      expect({ answer: await store.query(params) }, JSON.stringify(params)).toEqual(referenceQuery(stored, params, CONFIG))
    }
  })

  // The seal of a large hour takes several steps, and a batch may come between them. Sealing runs for a slice of
  // time per turn of the write queue; here the clock moves only when the database writes (by a whole slice), so each
  // turn runs exactly one step and the order of writes is fixed: no timing decides it.
  it('a batch that comes while an hour is sealed step by step stays open; the hour\'s older entries go and it is not rewritten whole', async () => {
    let clock = 0
    vi.spyOn(performance, 'now').mockImplementation(() => clock)
    const db = new MemoryLevel<string, string>()
    const batch = db.batch.bind(db) as (...args: unknown[]) => unknown
    ;(db as unknown as { batch: (...args: unknown[]) => unknown }).batch = (...args: unknown[]) => {
      clock += 1_000
      return batch(...args)
    }
    const store = await open(db)
    // 40 symbols × 25 records of about 5 KB: about 5 MB of chunks, more than one seal step holds (4 MB).
    const big = { pad: 'x'.repeat(5_000) }
    const symbols = Array.from({ length: 40 }, (_, i) => `S${String(i).padStart(2, '0')}`)
    const hour0 = symbols.flatMap((symbol) => Array.from({ length: 25 }, (_, i) => makeRecord({ symbol, timestamp: T0 + i * MINUTE, source: big })))
    const due = makeRecord({ symbol: 'S00', timestamp: T0 + HOUR + 11 * MINUTE })
    await store.putMany([...hour0, due])
    // Queued behind the first seal turn (one step): a correction of a sealed-to-be record and a new record of hour 0.
    const late = [makeRecord({ symbol: 'S00', timestamp: T0, value: 7 }), makeRecord({ symbol: 'S39', timestamp: T0 + 59 * MINUTE, id: 'late' })]
    await store.putMany(late)
    const written = [...hour0, due, ...late]
    // Hour 0's first entry is sealed and deleted; the late batch's two rows and hour 1's record stay open. Sealing the
    // hour again whole would have sealed the late rows with it (and rewritten all 1,000 records): then 1 would be left.
    expect(await unsealedAtMost(store, 3)).toBe(3)
    const stored = storedRecords(written, TEST_PROVIDER)
    const queries = [
      { symbol: 'S00', toTimestamp: String(T0 + 30_000) },
      { symbol: 'S00', fromTimestamp: String(T0), toTimestamp: String(T0 + 2 * HOUR), interval: '1' },
      { symbol: 'S39', fromTimestamp: String(T0), toTimestamp: String(T0 + HOUR), interval: '1' },
      { symbols: symbols.join(',') },
    ]
    for (const params of queries) expect({ answer: await store.query(params) }, JSON.stringify(params)).toEqual(referenceQuery(stored, params, CONFIG))
    // close() seals the open rows, as delta parts over the chunks.
    await store.close()
    stores.length = 0
    const reopened = await open(db)
    expect((await reopened.stats()).unsealedRecords).toBe(0)
    for (const params of queries) expect({ answer: await reopened.query(params) }, JSON.stringify(params)).toEqual(referenceQuery(stored, params, CONFIG))
  })

  it('over openBytes, late hours are sealed too (oldest first), and the answers stay the model\'s', async () => {
    const db = new MemoryLevel<string, string>()
    const written: InputRecord[] = []
    let store = await open(db)
    const first = Array.from({ length: 20 }, (_, i) => record(T0 + i * MINUTE, `a${i}`))
    await store.putMany(first)
    written.push(...first)
    await store.close()
    stores.length = 0

    store = await open(db, 1)
    const late = [record(T0 + 30 * MINUTE + 1, 'late', 2), record(T0 + 5 * MINUTE, 'a5', 3)]
    await store.putMany(late)
    written.push(...late)
    expect(await unsealedAtMost(store, 0)).toBe(0)
    const stored = storedRecords(written, TEST_PROVIDER)
    for (const params of [{ symbol: 'BTC', toTimestamp: String(T0 + 45 * MINUTE) }, { symbol: 'BTC', fromTimestamp: String(T0), toTimestamp: String(T0 + HOUR), interval: '1' }]) {
      expect({ answer: await store.query(params) }, JSON.stringify(params)).toEqual(referenceQuery(stored, params, CONFIG))
    }
  })
})
