/**
 * The typed methods say what `fill: 'none'` answers (checked by `npm run typecheck`, which covers test/):
 * candles without it, or with `'prev'`, are `Candle`s; with `'none'`, or an options type that may hold it,
 * empty candles (no `open`) are in the type; a range that may be `'none'` may be counted buckets.
 */
import { expect, it } from 'vitest'
import type { CandleOptions, PriceStore, RangeOptions, FillOptions } from '../../src/index.js'

/** Never run: its body is the check, made by the compiler. */
export async function typedAnswers(store: PriceStore, candleOptions: CandleOptions, rangeOptions: RangeOptions & FillOptions): Promise<unknown[]> {
  const plain = await store.candles('BTC', { from: 0, to: 1, interval: 1 })
  const carried = await store.candles('BTC', { from: 0, to: 1, interval: 1, fill: 'prev' })
  const counted = await store.candles('BTC', { from: 0, to: 1, interval: 1, fill: 'none' })
  // @ts-expect-error an empty candle has no open
  void counted[0]?.open
  const either = await store.candles('BTC', candleOptions)
  // @ts-expect-error the options may hold fill: 'none'
  void either[0]?.open
  const seen: unknown[] = [plain[0]?.open, carried[0]?.open]
  for await (const candle of store.candleStream('BTC', { from: 0, to: 1, interval: 1 })) seen.push(candle.open)
  for await (const candle of store.candleStream('BTC', { from: 0, to: 1, interval: 1, fill: 'none' })) seen.push('count' in candle ? candle.count : undefined)
  const range = await store.range('BTC', rangeOptions)
  for (const item of range) seen.push('count' in item ? item.count : item)
  return seen
}

it('is a compile-time check (npm run typecheck)', () => {
  expect(typeof typedAnswers).toBe('function')
})
