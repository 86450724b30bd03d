import type { AnswerForm, Candle, CountedBucket, EmptyCandle, FieldSelection, FilledPoint, PriceAnswer, RecordRef, Twap } from '../types.js'
import { DeferredAnswer, type DeferredItem } from './deferred-answer.js'
import { setOwn } from '../rules/own-keys.js'

/** One record (or record reference) with only the selected fields, its keys in the record's own order. */
export type SelectFields = <T extends object>(record: T) => T

/**
 * The function that applies a selection to one record: it keeps the
 * record's keys the selection keeps, in the record's order, so a selected
 * answer is the whole answer with the other keys taken out. A record
 * reference (`RecordRef`: `id`, `timestamp`, `value`) is selected the same
 * way.
 */
export function fieldSelector(selection: FieldSelection): SelectFields {
  const named: ReadonlySet<string> = new Set(selection.names)
  const keep = selection.mode === 'keep'
  return <T extends object>(record: T): T => {
    const out: Record<string, unknown> = {}
    for (const key of Object.keys(record)) {
      if (named.has(key) !== keep) continue
      const value = (record as Record<string, unknown>)[key]
      // An extra field named __proto__ (kept by a drop selection) must stay a key, not become the prototype.
      if (key === '__proto__') Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true })
      else out[key] = value
    }
    return out as T
  }
}

/**
 * An answer (or a deferred one) of the form `form` with the selection
 * applied to every record in it: the records of the latest, several and
 * range forms, the `record` of each gap-filled point, and the record
 * references of candles (`open`, `high`, `low`, `close`) and TWAPs
 * (`first`, `last`). What is not a record (a bucket, a count, an average)
 * stays. Pure: the answer given is not changed.
 */
export function selectAnswerFields(answer: PriceAnswer | DeferredAnswer, form: AnswerForm, selection: FieldSelection): PriceAnswer | DeferredAnswer {
  const select = fieldSelector(selection)
  if (answer instanceof DeferredAnswer) return answer.mapItems(select as (item: DeferredItem) => DeferredItem)
  switch (form) {
    case 'latest':
    case 'range':
      return (answer as object[]).map(select) as PriceAnswer
    case 'filled':
      return (answer as FilledPoint[]).map((point) => ({ ...point, record: select(point.record) }))
    case 'candles':
      return (answer as Candle[]).map((candle) => selectCandle(candle, select))
    case 'counted':
      return (answer as CountedBucket[]).map((point) => (point.record === undefined ? point : { ...point, record: select(point.record) })) as PriceAnswer
    case 'countedCandles':
      return (answer as (Candle | EmptyCandle)[]).map((candle) => ('open' in candle ? selectCandle(candle, select) : candle)) as PriceAnswer
    case 'several':
      return mapValues(answer as Record<string, object>, select) as PriceAnswer
    case 'twap':
      return mapValues(answer as Record<string, Twap>, (twap) => ({ ...twap, first: select(twap.first), last: select(twap.last) }))
    case 'cross':
    case 'crossRange':
    case 'crossCandles':
    case 'crossTwap':
      return answer // cross rates refuse `fields` (parse-query.ts): their legs are record references already
  }
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
