import type { PriceStore } from '../store/price-store.js'

const MINUTE = 60_000
const HOUR = 60 * MINUTE
const DAY = 24 * HOUR

/** The time span a symbol's records cover, read from the store: first and last timestamp. */
export interface DataSpan {
  readonly from: number
  readonly to: number
}

/** One query form to time. */
export interface BenchForm {
  readonly name: string
  /** Runs it is timed over; the stream, which reads the whole span, runs fewer. */
  readonly runs: number
  /** Whether an untimed run goes first, so the caches the form uses are warm. */
  readonly warmUp: boolean
  /** Runs the query once (`run` numbers the runs, for forms that vary their time); resolves with the records it answered. */
  run(run: number): Promise<number>
}

/** The stream reads every record of the span, so it is timed at most this often. */
export const STREAM_RUNS = 3

/**
 * The first and last record of `symbol`, asked of the store itself: the
 * first as of time 0 looking forward, the last as the latest.
 */
export async function dataSpan(store: PriceStore, symbol: string): Promise<DataSpan | undefined> {
  const [first] = await store.latest(symbol, { to: 0, direction: 'after' })
  const [last] = await store.latest(symbol)
  return first === undefined || last === undefined ? undefined : { from: first.timestamp, to: last.timestamp }
}

/**
 * Every query form the store answers, on `symbol` over `span`: the latest
 * forms, several (all symbols), as-of lookups spread over the span, ranges
 * and candles over the last day of data (or the whole span if shorter),
 * and the whole span streamed record by record.
 */
export function benchForms(store: PriceStore, symbol: string, symbols: number, span: DataSpan, runs: number): BenchForm[] {
  const day = { from: Math.max(span.from, span.to - DAY + 1), to: span.to }
  const window = span.to - day.from + 1 >= DAY ? '24 h' : 'the span'
  const timed = (name: string, run: (i: number) => Promise<number>): BenchForm => ({ name, runs, warmUp: true, run })
  const range = (label: string, interval: number): BenchForm =>
    timed(`range ${label} over ${window}`, async () => (await store.range(symbol, { ...day, interval })).length)
  return [
    timed('latest', async () => (await store.latest(symbol)).length),
    timed('latest-100', async () => (await store.latest(symbol, { limit: 100 })).length),
    timed(`several (all ${symbols} symbols)`, async () => Object.keys(await store.several()).length),
    // A different time each run, spread over the span: one cached answer would time the cache.
    timed('as-of (across the span)', async (i) => (await store.latest(symbol, { to: span.from + Math.floor(((i + 0.5) / runs) * (span.to - span.from)) })).length),
    range('1 min', MINUTE),
    range('10 min', 10 * MINUTE),
    range('1 h', HOUR),
    timed(`candles 1 h over ${window}`, async () => (await store.candles(symbol, { ...day, interval: HOUR })).length),
    {
      name: 'stream (whole span, interval 1)',
      runs: Math.min(runs, STREAM_RUNS),
      warmUp: false,
      async run() {
        let count = 0
        for await (const _ of store.rangeStream(symbol, { ...span, interval: 1 })) count++
        return count
      },
    },
  ]
}
