/**
 * Cancellation: every query method and both streams take an AbortSignal
 * (`signal`); an abort rejects with PRICE_ABORTED, stops reading at the next
 * batch and releases the read view, even for a stream nobody pulls again.
 */
import { getEventListeners } from 'node:events'
import { MemoryLevel } from 'memory-level'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { PriceStore, isPriceStoreError } from '../../src/index.js'
import type { PriceStoreError } from '../../src/index.js'
import { T0, TEST_PROVIDER, makeRecord } from '../../src/testing/records.js'
import { rejectsCode } from '../support/assertions.js'
import { countSnapshots } from '../support/snapshots.js'

const HOUR = 3_600_000
/** More hours than the view reads at once: a range over them is read in batches, an hour each. */
const HOURS = 100
const FROM = T0
const TO = T0 + HOURS * HOUR - 1
/** Not on ten-minute lines, so ranges scan every record rather than reading bucket heads. */
const INTERVAL = 60_000



let db: MemoryLevel<any, any>
let store: PriceStore
let snapshots: { readonly open: number }

beforeEach(async () => {
  db = new MemoryLevel()
  snapshots = countSnapshots(db)
  // No hot tails: every read goes through a view, so its release can be seen.
  store = await PriceStore.open(db, { provider: TEST_PROVIDER, cache: { recordsPerSymbol: 0 } })
  const records = []
  for (let hour = 0; hour < HOURS; hour++) {
    records.push(makeRecord({ symbol: 'BTC', timestamp: T0 + hour * HOUR }), makeRecord({ symbol: 'ETH', timestamp: T0 + hour * HOUR + 1 }))
  }
  await store.putMany(records)
})

afterEach(async () => {
  await store.close()
})

function aborted(reason: unknown = new Error('user gave up')): AbortSignal {
  const controller = new AbortController()
  controller.abort(reason)
  return controller.signal
}

const calls: [string, (s: PriceStore, signal: AbortSignal) => Promise<unknown>][] = [
  ['latest', (s, signal) => s.latest('BTC', { signal })],
  ['several', (s, signal) => s.several(['BTC', 'ETH'], { signal })],
  ['range', (s, signal) => s.range('BTC', { from: FROM, to: TO, interval: INTERVAL, signal })],
  ['filled range', (s, signal) => s.range('BTC', { from: FROM, to: TO, interval: INTERVAL, fill: 'prev', signal })],
  ['candles', (s, signal) => s.candles('BTC', { from: FROM, to: TO, interval: HOUR, signal })],
  ['twap', (s, signal) => s.twap(undefined, { from: FROM, to: TO, signal })],
  ['query', (s, signal) => s.query({ symbol: 'BTC' }, { signal })],
  ['run', (s, signal) => s.run(s.plan({ symbols: 'BTC,ETH' }), { signal })],
  ['rangeStream', (s, signal) => collect(s.rangeStream('BTC', { from: FROM, to: TO, interval: INTERVAL, signal }))],
  ['candleStream', (s, signal) => collect(s.candleStream('BTC', { from: FROM, to: TO, interval: HOUR, signal }))],
]

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = []
  for await (const item of items) out.push(item)
  return out
}

describe('an aborted signal', () => {
  it.each(calls)('%s rejects with PRICE_ABORTED, the reason as cause, and leaves no view open', async (_name, call) => {
    const reason = new Error('user gave up')
    const err = await rejectsCode(call(store, aborted(reason)), 'PRICE_ABORTED')
    expect(err.cause).toBe(reason)
    expect(err.details.parameter).toBe('signal')
    expect(err.message).toMatch(/aborted.*user gave up/)
    expect(snapshots.open).toBe(0)
  })

  it.each(calls)('%s answers as without a signal when the signal never aborts', async (_name, call) => {
    const signal = new AbortController().signal
    await expect(call(store, signal)).resolves.toBeDefined()
    expect(getEventListeners(signal, 'abort')).toHaveLength(0)
    expect(snapshots.open).toBe(0)
  })

  it('a timeout signal (AbortSignal.timeout) gives PRICE_ABORTED with its TimeoutError as cause', async () => {
    const signal = AbortSignal.timeout(1)
    await vi.waitFor(() => expect(signal.aborted).toBe(true))
    const err = await rejectsCode(store.latest('BTC', { signal }), 'PRICE_ABORTED')
    expect((err.cause as Error).name).toBe('TimeoutError')
  })
})

describe('an abort while a query reads', () => {
  it('stops the read at its next batch and releases the view', async () => {
    const controller = new AbortController()
    const pending = store.range('BTC', { from: FROM, to: TO, interval: INTERVAL, signal: controller.signal })
    // The read has started (it took its view) and waits for its first batch.
    expect(snapshots.open).toBe(1)
    controller.abort()
    const err = await rejectsCode(pending, 'PRICE_ABORTED')
    expect(err.cause).toBe(controller.signal.reason)
    expect(snapshots.open).toBe(0)
    // The same query without the abort reads every hour.
    expect(await store.range('BTC', { from: FROM, to: TO, interval: INTERVAL })).toHaveLength(HOURS)
  })
})

describe('an aborted stream', () => {
  it('releases its view at the abort, though it is never pulled again, and later pulls reject', async () => {
    const controller = new AbortController()
    const stream = store.rangeStream('BTC', { from: FROM, to: TO, interval: INTERVAL, signal: controller.signal })
    const iterator = stream[Symbol.asyncIterator]()
    // Nothing is held before the first pull.
    expect(snapshots.open).toBe(0)
    const first = await iterator.next()
    expect(first.done).toBe(false)
    expect(snapshots.open).toBe(1)
    controller.abort()
    // The release runs from the abort listener, without a pull: wait for it to finish.
    await vi.waitFor(() => expect(snapshots.open).toBe(0))
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0)
    await rejectsCode(iterator.next(), 'PRICE_ABORTED')
    await rejectsCode(iterator.next(), 'PRICE_ABORTED')
  })

  it('stops a for-await loop with PRICE_ABORTED at the next item, with the items so far intact', async () => {
    const controller = new AbortController()
    const seen: number[] = []
    let caught: unknown
    try {
      for await (const candle of store.candleStream('BTC', { from: FROM, to: TO, interval: HOUR, signal: controller.signal })) {
        seen.push(candle.bucket)
        if (seen.length === 3) controller.abort()
      }
    } catch (err) {
      caught = err
    }
    expect(isPriceStoreError(caught, 'PRICE_ABORTED')).toBe(true)
    expect(seen).toEqual([FROM, FROM + HOUR, FROM + 2 * HOUR])
    expect(snapshots.open).toBe(0)
  })

  it('that ends normally, or is left with break, stops listening to its signal', async () => {
    const controller = new AbortController()
    const options = { from: FROM, to: TO, interval: INTERVAL, signal: controller.signal }
    expect(await collect(store.rangeStream('BTC', options))).toHaveLength(HOURS)
    for await (const record of store.rangeStream('BTC', options)) {
      expect(record.symbol).toBe('BTC')
      break
    }
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0)
    expect(snapshots.open).toBe(0)
  })
})

describe('a signal option that is not an AbortSignal', () => {
  it.each([['a string', 'stop'], ['an object', { aborted: true }], ['null', null]])('(%s) is PRICE_INVALID_QUERY naming signal', async (_name, signal) => {
    const options = { signal } as unknown as { signal: AbortSignal }
    for (const call of [
      () => store.latest('BTC', options),
      () => store.query({ symbol: 'BTC' }, options),
      () => store.twap(['BTC'], { from: FROM, to: TO, ...options }),
    ]) {
      const err: PriceStoreError = await rejectsCode(call(), 'PRICE_INVALID_QUERY')
      expect(err.details.parameter).toBe('signal')
    }
    expect(() => store.rangeStream('BTC', { from: FROM, to: TO, interval: INTERVAL, ...options })).toThrow(/signal must be an AbortSignal/)
  })

  it('options of query() and run() that are not an object are PRICE_INVALID_QUERY naming options', async () => {
    const err = await rejectsCode(store.query({ symbol: 'BTC' }, 5 as never), 'PRICE_INVALID_QUERY')
    expect(err.details.parameter).toBe('options')
  })
})
