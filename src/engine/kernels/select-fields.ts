import type { Candle, CountedBucket, EmptyCandle, FilledPoint, PriceAnswer, PriceRecord, RecordRef, Twap } from '../../types.js'
import { setOwn } from '../../rules/own-keys.js'

/** One record (or record reference) with only the selected fields, its keys in the record's own order. */
export type SelectFields = <T extends object>(record: T) => T

/*
 * A field selection applied to each shape of answer the forms give: the
 * records themselves, the `record` of a gap-filled or counted point, the
 * record references of a candle or a TWAP. What is not a record (a bucket,
 * a count, an average) stays. Each returns a new answer; the one given is
 * not changed.
 */

/** A list of records, each selected. */
export function selectRecords(answer: PriceAnswer, select: SelectFields): PriceAnswer {
  return (answer as PriceRecord[]).map(select)
}

/** Records keyed by symbol, each selected. */
export function selectRecordsBySymbol(answer: PriceAnswer, select: SelectFields): PriceAnswer {
  return mapValues(answer as Record<string, PriceRecord>, select)
}

/** Gap-filled points: each point's record. */
export function selectFilledPoints(answer: PriceAnswer, select: SelectFields): PriceAnswer {
  return (answer as FilledPoint[]).map((point) => ({ ...point, record: select(point.record) }))
}

/** Counted buckets: the record of each bucket that holds one. */
export function selectCountedPoints(answer: PriceAnswer, select: SelectFields): PriceAnswer {
  return (answer as CountedBucket[]).map((point) => (point.record === undefined ? point : { ...point, record: select(point.record) })) as PriceAnswer
}

/** Candles: each one's open, high, low and close references. */
export function selectCandles(answer: PriceAnswer, select: SelectFields): PriceAnswer {
  return (answer as Candle[]).map((candle) => selectCandle(candle, select))
}

/** Counted candles: the references of each bucket's candle; an empty bucket has none. */
export function selectCountedCandles(answer: PriceAnswer, select: SelectFields): PriceAnswer {
  return (answer as (Candle | EmptyCandle)[]).map((candle) => ('open' in candle ? selectCandle(candle, select) : candle)) as PriceAnswer
}

/** TWAPs keyed by symbol: each one's first and last references. */
export function selectTwaps(answer: PriceAnswer, select: SelectFields): PriceAnswer {
  return mapValues(answer as Record<string, Twap>, (twap) => ({ ...twap, first: select(twap.first), last: select(twap.last) }))
}

function selectCandle(candle: Candle, select: SelectFields): Candle {
  const refs: Pick<Candle, 'open' | 'high' | 'low' | 'close'> = {
    open: select<RecordRef>(candle.open), high: select<RecordRef>(candle.high), low: select<RecordRef>(candle.low), close: select<RecordRef>(candle.close),
  }
  return { ...candle, ...refs }
}

/** An object keyed by symbol with each value mapped; a symbol named "__proto__" stays a key. */
function mapValues<T, U>(bySymbol: Record<string, T>, map: (value: T) => U): Record<string, U> {
  const mapped: Record<string, U> = {}
  for (const symbol of Object.keys(bySymbol)) setOwn(mapped, symbol, map(bySymbol[symbol] as T))
  return mapped
}
