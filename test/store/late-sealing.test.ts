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
import { afterEach, describe, expect, it } from 'vitest'
import { DEFAULT_LIMITS, PriceStore } from '../../src/index.js'
import { T0, TEST_PROVIDER, makeRecord, type InputRecord } from '../../src/testing/records.js'
import { referenceQuery, storedRecords } from '../../src/testing/reference-model.js'

const HOUR = 3_600_000
const CONFIG = { provider: TEST_PROVIDER, limits: DEFAULT_LIMITS }
const MINUTE = 60_000
const stores: PriceStore[] = []

afterEach(async () => {
  for (const store of stores.splice(0)) await store.close()
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
