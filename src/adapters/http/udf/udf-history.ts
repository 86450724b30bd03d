import type { Candle, PriceRecord } from '../../../types.js'
import { bucketOf, bucketStart } from '../../../engine/grid.js'
import { inScope, type ReadScope } from '../../../engine/read-scope.js'
import { UdfParams, udfError } from './udf-params.js'

/** The candles and records `/udf/history` reads: `PriceStore` fits. */
export interface UdfHistorySource {
  /** Candles of `symbol` over `from..to` (ms, inclusive) on the grid of `interval` shifted by `origin`, oldest first. */
  candles(symbol: string, options: { from: number; to: number; interval: number; origin: number }): Promise<Candle[]>
  /** The newest `limit` records of `symbol` (at or before `to`, when given), newest first. */
  latest(symbol: string, options: { limit: number; to?: number }): Promise<PriceRecord[]>
}

/**
 * `source` as a reader in `scope` sees it: candles and records at or before
 * `notAfter` only, of its symbols only (another has none).
 */
export function scopedHistorySource(source: UdfHistorySource, scope: ReadScope | undefined): UdfHistorySource {
  if (scope === undefined) return source
  const { notAfter } = scope
  const cut = (to: number | undefined): number | undefined => (notAfter === undefined ? to : Math.min(to ?? notAfter, notAfter))
  return {
    candles: async (symbol: string, options: { from: number; to: number; interval: number; origin: number }): Promise<Candle[]> => {
      const to = cut(options.to) as number
      return !inScope(scope, symbol) || to < options.from ? [] : source.candles(symbol, { ...options, to })
    },
    latest: async (symbol: string, options: { limit: number; to?: number }): Promise<PriceRecord[]> => {
      const to = cut(options.to)
      return !inScope(scope, symbol) || (to !== undefined && to < 0) ? [] : source.latest(symbol, { ...options, ...(to === undefined ? {} : { to }) })
    },
  }
}

/** A bucket grid: bucket `k` starts at `origin + k·interval` (ms). */
export interface UdfGrid {
  readonly interval: number
  readonly origin: number
}

const MINUTE = 60_000
const DAY = 86_400_000
/** 1970-01-05T00:00Z, the first Monday after the epoch: weekly bars start on Mondays, as TradingView draws them. */
const FIRST_MONDAY = 4 * DAY

/**
 * The resolutions `/udf/history` serves, as TradingView names them: minutes
 * as a number, then a day and a week. Days start at 00:00 UTC. Months are
 * left out: they are not a fixed number of milliseconds.
 */
export const UDF_RESOLUTIONS: Readonly<Record<string, UdfGrid>> = Object.freeze({
  '1': { interval: MINUTE, origin: 0 },
  '5': { interval: 5 * MINUTE, origin: 0 },
  '15': { interval: 15 * MINUTE, origin: 0 },
  '30': { interval: 30 * MINUTE, origin: 0 },
  '60': { interval: 60 * MINUTE, origin: 0 },
  '240': { interval: 240 * MINUTE, origin: 0 },
  '1D': { interval: DAY, origin: 0 },
  '1W': { interval: 7 * DAY, origin: FIRST_MONDAY },
})

/** Older TradingView versions say `D` and `W` for one day and one week. */
const GRIDS = new Map<string, UdfGrid>([...Object.entries(UDF_RESOLUTIONS), ['D', UDF_RESOLUTIONS['1D']!], ['W', UDF_RESOLUTIONS['1W']!]])

/** The last second a JavaScript `Date` can hold: later times have no calendar date to draw. */
export const MAX_UDF_SECONDS = 8_640_000_000_000

const PARAMETERS = ['symbol', 'resolution', 'from', 'to', 'countback'] as const

/**
 * A validated `/udf/history` request, turned into store terms: the window
 * holds whole buckets, so a bar is the same whatever window asked for it.
 */
export interface HistoryPlan {
  readonly symbol: string
  readonly grid: UdfGrid
  /** Whole buckets to read, in ms, inclusive; absent when the request covers no time. */
  readonly window?: { readonly from: number; readonly to: number }
  /** Where the past begins for `nextTime`: the first millisecond asked for. */
  readonly start: number
}

/** The body of a `/udf/history` answer: UDF's columns, or `no_data`. */
export type UdfHistory =
  | { readonly s: 'ok'; readonly t: number[]; readonly o: number[]; readonly h: number[]; readonly l: number[]; readonly c: number[]; readonly v: number[] }
  | { readonly s: 'no_data'; readonly nextTime?: number }

/**
 * Validates `/udf/history` parameters and plans the buckets to read. Times
 * are UNIX seconds; `to` is not included. Every bucket that overlaps
 * `[from, to)` is read whole; with `countback`, `from` is ignored and the
 * `countback` buckets ending with the one before `to` are read. At most
 * `maxBars` buckets are read: past that, the newest `maxBars` (a client
 * sees the first bar come later than it asked and asks again for the rest,
 * as TradingView's UDF adapter does with `limitedServerResponse`).
 *
 * @throws PriceStoreError `PRICE_INVALID_QUERY` (a parameter missing or given twice),
 *   `PRICE_INVALID_SYMBOL`, `PRICE_INVALID_INTERVAL` (an unknown resolution),
 *   `PRICE_INVALID_RANGE` (a bad `from`, `to` or `countback`, or `from > to`)
 */
export function planHistory(params: URLSearchParams, maxBars: number): HistoryPlan {
  const udf = new UdfParams(params, PARAMETERS)
  const symbol = udf.symbol()
  const grid = resolutionGrid(udf.required('resolution'))
  const from = udf.integer('from', 'PRICE_INVALID_RANGE', 0, MAX_UDF_SECONDS)
  udf.required('to')
  const to = udf.integer('to', 'PRICE_INVALID_RANGE', 0, MAX_UDF_SECONDS) as number
  const countback = udf.integer('countback', 'PRICE_INVALID_RANGE', 1, Number.MAX_SAFE_INTEGER)
  if (from === undefined && countback === undefined) {
    throw udfError('PRICE_INVALID_QUERY', 'from', 'parameter from is required unless countback is given')
  }
  if (from !== undefined && from > to) throw udfError('PRICE_INVALID_RANGE', 'from', `from must not be after to (got ${from} > ${to})`)

  const end = to * 1000 - 1
  const last = bucketOf(grid, end)
  let first = countback === undefined ? bucketOf(grid, (from as number) * 1000) : last - countback + 1
  if (last - first + 1 > maxBars) first = last - maxBars + 1
  const windowFrom = Math.max(0, bucketStart(grid, first))
  const windowTo = bucketStart(grid, last + 1) - 1
  const covers = end >= 0 && (countback !== undefined || (from as number) < to)
  if (!covers || windowFrom > windowTo) return { symbol, grid, start: (from ?? to) * 1000 }
  return { symbol, grid, window: { from: windowFrom, to: windowTo }, start: windowFrom }
}

/** The grid of a UDF resolution. @throws PriceStoreError `PRICE_INVALID_INTERVAL` for one not served */
export function resolutionGrid(resolution: string): UdfGrid {
  const grid = GRIDS.get(resolution)
  if (grid === undefined) {
    const served = Object.keys(UDF_RESOLUTIONS).join(', ')
    throw udfError('PRICE_INVALID_INTERVAL', 'resolution', `resolution must be one of ${served} (got ${JSON.stringify(resolution)})`)
  }
  return grid
}

/**
 * Reads a planned history: UDF's columns (`t` in seconds, `v` the number of
 * records in the bar), or `no_data` with `nextTime`, the start of the
 * newest bar before the request, when there is one.
 */
export async function readHistory(source: UdfHistorySource, plan: HistoryPlan): Promise<UdfHistory> {
  if (plan.window !== undefined) {
    const candles = await source.candles(plan.symbol, { ...plan.window, ...plan.grid })
    if (candles.length > 0) return columns(candles)
  }
  if (plan.start <= 0) return { s: 'no_data' }
  const [before] = await source.latest(plan.symbol, { to: plan.start - 1, limit: 1 })
  if (before === undefined) return { s: 'no_data' }
  const bar = bucketStart(plan.grid, bucketOf(plan.grid, before.timestamp))
  return { s: 'no_data', nextTime: Math.max(0, Math.floor(bar / 1000)) }
}

function columns(candles: readonly Candle[]): UdfHistory {
  const t: number[] = []
  const o: number[] = []
  const h: number[] = []
  const l: number[] = []
  const c: number[] = []
  const v: number[] = []
  for (const candle of candles) {
    t.push(Math.floor(candle.bucket / 1000))
    o.push(candle.open.value)
    h.push(candle.high.value)
    l.push(candle.low.value)
    c.push(candle.close.value)
    v.push(candle.count)
  }
  return { s: 'ok', t, o, h, l, c, v }
}
