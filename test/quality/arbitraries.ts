/**
 * Data sets and options for the quality tests: few timestamps and ids, so
 * duplicates (same timestamp, other id), replaced keys, long and short gaps
 * and zero values are common; sources with numbers, failed fetches and
 * nested values.
 */
import fc from 'fast-check'
import { TEST_PROVIDER, storedRecords } from '../../src/testing/index.js'
import type { PriceRecord } from '../../src/types.js'

export const BASE = Date.UTC(2026, 0, 1)
export const HOUR = 3_600_000
export const NOW = BASE + 30 * HOUR

const valueArb = fc.oneof(
  { arbitrary: fc.constantFrom(0, 1, -1, 100, 100.5, 30_000.12), weight: 4 },
  { arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e6, max: 1e6 }), weight: 2 },
  { arbitrary: fc.constantFrom(Number.MAX_VALUE, -Number.MAX_VALUE, 5e-324), weight: 1 },
)

const sourceArb = fc.dictionary(
  fc.constantFrom('binance', 'kraken', 'okx', 'coinbase', 'bybit'),
  fc.oneof(valueArb, fc.constant('error'), fc.constant(null), fc.constant({ nested: 1 })),
  { maxKeys: 5 },
)

/** An input record; its timestamp from a pool spread over a day (some minutes apart, some hours). */
export function recordArb(symbols: readonly string[], timestamps: readonly number[]): fc.Arbitrary<Record<string, unknown>> {
  return fc.record({
    symbol: fc.constantFrom(...symbols),
    timestamp: fc.constantFrom(...timestamps),
    id: fc.constantFrom('a', 'b', 'c', 'Z', '\uFF61', '\u{1F600}'),
    value: valueArb,
    source: sourceArb,
  }).map((r) => ({ ...r, provider: TEST_PROVIDER.id, signature: 'c2ln', permawebTx: 'tx', version: '0.4' }))
}

/** A pool of timestamps: steady steps with holes, some far apart. */
export const timestampsArb = fc
  .array(fc.oneof({ arbitrary: fc.integer({ min: 1, max: 20 }), weight: 5 }, { arbitrary: fc.integer({ min: 60, max: 400 }), weight: 1 }), { minLength: 1, maxLength: 30 })
  .map((steps) => {
    let t = BASE + 7 * HOUR
    return steps.map((step) => (t += step * 10_000))
  })

export interface QualityCase {
  readonly inputs: readonly Record<string, unknown>[]
  readonly records: readonly PriceRecord[]
  readonly options: {
    symbols?: string[]
    from: number
    to: number
    now: number
    interval?: number
    origin?: number
    gapThreshold?: number
    sources?: boolean
    moves?: boolean
  }
}

/** Records of up to three symbols and a report's options over them. */
export const qualityCaseArb: fc.Arbitrary<QualityCase> = fc
  .record({ symbols: fc.uniqueArray(fc.constantFrom('BTC', 'ETH', 'BTC-USD', 'stETH'), { minLength: 1, maxLength: 3 }), timestamps: timestampsArb })
  .chain(({ symbols, timestamps }) =>
    fc.record({
      inputs: fc.array(recordArb(symbols, timestamps), { maxLength: 80 }),
      fromAt: fc.integer({ min: -2, max: timestamps.length }),
      toAt: fc.integer({ min: -1, max: timestamps.length + 1 }),
      named: fc.option(fc.subarray([...symbols, 'DOGE'], { minLength: 1 }), { nil: undefined }),
      interval: fc.option(fc.constantFrom(60_000, 600_000, 3_600_000, 7_777_777), { nil: undefined }),
      origin: fc.option(fc.integer({ min: -HOUR, max: HOUR }), { nil: undefined }),
      gapThreshold: fc.option(fc.constantFrom(1, 10_000, 25_000, 600_000), { nil: undefined }),
      sources: fc.boolean(),
      moves: fc.constantFrom(undefined, true, false),
      timestamps: fc.constant(timestamps),
    }),
  )
  .map(({ inputs, fromAt, toAt, named, interval, origin, gapThreshold, sources, moves, timestamps }) => {
    const at = (i: number) => (i < 0 ? BASE + 6 * HOUR : i >= timestamps.length ? (timestamps.at(-1) as number) + HOUR : (timestamps[i] as number))
    let from = at(fromAt)
    let to = at(toAt)
    if (from > to) [from, to] = [to, from]
    return {
      inputs,
      records: storedRecords(inputs, TEST_PROVIDER),
      options: {
        from, to, now: NOW,
        // sources: true needs the values.
        ...(sources && moves !== false ? { sources } : {}),
        ...(moves === undefined ? {} : { moves }),
        ...(named === undefined ? {} : { symbols: named }),
        ...(interval === undefined ? {} : { interval, ...(origin === undefined ? {} : { origin }) }),
        ...(gapThreshold === undefined ? {} : { gapThreshold }),
      },
    }
  })
