/**
 * Issue 10's new bucketed forms: candles (`store.candles`) and the
 * gap-filled range (`store.range` with `fill: 'prev'`), 24 h at 10 min and
 * at 1 h, on the very windows of the range cases of the same shapes (the
 * worker seeds these families as the range family, and the windows are
 * drawn by `rangeCases`), so each compares with its range case too. The
 * issue sets no target number: it asks for the ratio to SQLite doing the
 * same work, which the report lists among the targets with "—".
 *
 * SQLite (sqlite-baseline.ts), on both layouts, the fastest plan measured:
 * - candles: one statement with `ROW_NUMBER()` windows in the four orders;
 *   one statement with a `GROUP BY` pass, then key seeks for open and close
 *   and backward searches of the bucket for high and low; or a scan of
 *   (timestamp, id, value) with the candles built in JS;
 * - fill: one statement where a recursive CTE lists the buckets and each
 *   seeks the latest record at or before its end (so the record before
 *   `from` too); or each range plan plus the seek before `from` (when the
 *   first bucket is empty) and carrying in JS.
 *
 * Equality, checked untimed before a case is calibrated, besides the
 * sampled checks of its timed calls: every SQLite plan must return exactly
 * the store's answer (same buckets, same records, same counts, ages and
 * carried flags)
 * - on the case's first 8 windows and on windows made to reach what random
 *   24 h windows inside the data rarely do (a carried first bucket, the
 *   data's edges, buckets past its end);
 * - on a small crafted data set (loaded into a scratch store and scratch
 *   SQLite files once per family) with what the generated data lacks:
 *   equal values in a bucket (the ties of high and low), records sharing a
 *   millisecond (open and close by id), and gaps (carried buckets inside
 *   the range).
 * Any difference fails the run.
 */
import { mkdir, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { PriceStore } from '../src/index.js'
import type { Candle, FilledPoint } from '../src/index.js'
import { sqlitePlans } from './context.js'
import type { FamilyContext, QueryContext } from './context.js'
import type { DataShape, GeneratedRecord } from './generate.js'
import { BENCH_PROVIDER, HOUR_MS, STEP_MS, dataShape, generateBatches, recordsInRange } from './generate.js'
import { DATA_DIR } from './load.js'
import { checkPlansAgree, runCase } from './measure.js'
import type { CaseDefinition, CaseResult, QueryCase, Target } from './measure.js'
import { rangeCases } from './range.bench.js'
import type { RangeCase, RangeParam } from './range.bench.js'
import { CANDLE_STRATEGIES, FILL_STRATEGIES, SQLITE_LAYOUTS, SqliteBaseline } from './sqlite-baseline.js'
import type { SqliteLayout } from './sqlite-baseline.js'

/** The range shapes these cases reuse. */
const SHAPES: readonly string[] = ['24 h at 10 min', '24 h at 1 h']

/** No number: issue 10 asks for the ratio. */
const RATIO: Target = { against: 'sqlite', text: 'ratio to SQLite (no target set)', issue: 10 }

/** One of the two forms: how the store and SQLite answer it, and how many points the generated data gives. */
interface Form<S extends string> {
  readonly family: 'candles' | 'fill'
  store(store: PriceStore, p: RangeParam): Promise<unknown>
  readonly strategies: readonly S[]
  sqlite(db: SqliteBaseline, p: RangeParam, strategy: S): unknown
  applies?(p: RangeParam, strategy: S): boolean
  /** Points (candles, filled buckets) the generated data gives for `p`. */
  expected(shape: DataShape, p: RangeParam): number
  readonly note: string
}

const CANDLES = {
  family: 'candles',
  store: (store, p) => store.candles(p.symbol, { from: p.from, to: p.to, interval: p.interval }),
  strategies: CANDLE_STRATEGIES,
  sqlite: (db, p, strategy) => db.candles(p.symbol, p.from, p.to, p.interval, strategy),
  // One candle per non-empty bucket: as many as the range form's records.
  expected: (shape, p) => recordsInRange(shape, p.from, p.to, p.interval),
  note: 'floor: read every chunk of the range (every record counts), no decoding',
} satisfies Form<(typeof CANDLE_STRATEGIES)[number]>

const FILL = {
  family: 'fill',
  store: (store, p) => store.range(p.symbol, { from: p.from, to: p.to, interval: p.interval, fill: 'prev' }),
  strategies: FILL_STRATEGIES,
  sqlite: (db, p, strategy) => db.filledRange(p.symbol, p.from, p.to, p.interval, strategy),
  applies: (p, strategy) => SqliteBaseline.fillStrategyApplies(strategy, p.from, p.to, p.interval),
  // Every bucket from the one holding the data's first record on (earlier ones have nothing to carry).
  expected: (shape, p) => (p.to < shape.from ? 0 : Math.floor(p.to / p.interval) - Math.floor(Math.max(p.from, shape.from) / p.interval) + 1),
  note: 'no floor (the range case of the same windows has it)',
} satisfies Form<(typeof FILL_STRATEGIES)[number]>

/** A case of this file: a range case's windows, and the windows of its setup check. */
export interface BucketedCase extends QueryCase<RangeParam> {
  readonly interval: number
  readonly setupParams: readonly RangeParam[]
}

/**
 * The setup check's windows: the case's first 8, then, for its first
 * symbol, one whose first bucket's part of the range holds no record (so
 * that bucket carries the record before `from`), one running past the data's
 * end (the last buckets carry), one starting before the data (the first
 * buckets have nothing to carry), one wholly after it (every bucket
 * carries) and one wholly before it (an empty answer).
 */
function setupWindows(shape: DataShape, base: RangeCase): RangeParam[] {
  const { interval, span } = base
  const symbol = (base.params[0] as RangeParam).symbol
  const window = (from: number): RangeParam => ({ symbol, from, to: from + span - 1, interval })
  return [
    ...base.params.slice(0, 8),
    // The data starts on a bucket boundary and has a record every STEP_MS: the last half step of a bucket is empty.
    window(shape.from + interval - STEP_MS / 2),
    window(shape.to - Math.floor(span / 2)),
    window(shape.from - Math.floor(span / 2)),
    window(shape.to + 3 * interval),
    { symbol, from: shape.from - span - interval, to: shape.from - 1, interval },
  ]
}

/** A form's cases, store side (full runs and store-only runs): the range cases of {@link SHAPES}, drawn as the range family draws them. */
function casesOf<S extends string>(form: Form<S>, ctx: QueryContext): BucketedCase[] {
  // The range family gives the notes about its shapes.
  const ranges = rangeCases({ ...ctx, note: () => undefined }).filter((c) => SHAPES.includes(c.shape))
  return ranges.map((base) => ({
    name: base.name.replace(/^range /, `${form.family} `),
    params: base.params,
    interval: base.interval,
    setupParams: setupWindows(ctx.shape, base),
    store: (p) => form.store(ctx.store, p),
    count: (answer) => (answer as Candle[] | FilledPoint[]).length,
    expected: (p) => form.expected(ctx.shape, p),
    targets: [RATIO],
  }))
}

export function candlesCases(ctx: QueryContext): BucketedCase[] {
  return casesOf(CANDLES, ctx)
}

export function fillCases(ctx: QueryContext): BucketedCase[] {
  return casesOf(FILL, ctx)
}

/** The SQLite plans of a form (layout × strategy) over the given databases. */
function plansOf<S extends string>(form: Form<S>, sqlite: FamilyContext['sqlite']): CaseDefinition<RangeParam>['sqlite'] {
  return sqlitePlans({ sqlite }, form.strategies, (db, p: RangeParam, strategy: S) => form.sqlite(db, p, strategy), form.applies)
}

async function runForm<S extends string>(form: Form<S>, ctx: FamilyContext): Promise<CaseResult[]> {
  const cases = casesOf(form, ctx)
  const crafted = await checkOnCraftedData(form, cases.map((c) => c.interval))
  ctx.note(
    `${form.family}: every SQLite plan returned the store's answer on ${crafted} windows of a crafted data set ` +
      '(equal values in a bucket, records sharing a millisecond, gaps), checked untimed before the cases',
  )
  const results: CaseResult[] = []
  for (const base of cases) {
    const definition: CaseDefinition<RangeParam> = {
      ...base,
      sqlite: plansOf(form, ctx.sqlite),
      ...(form.family === 'candles'
        ? { floor: (p: RangeParam) => ctx.floor.scan(p.symbol, p.from, p.to, false), floorCheck: 'at-least' as const }
        : {}),
      note: form.note,
    }
    results.push(await runCase(form.family, definition, ctx.budget))
  }
  return results
}

export function runCandles(ctx: FamilyContext): Promise<CaseResult[]> {
  return runForm(CANDLES, ctx)
}

export function runFill(ctx: FamilyContext): Promise<CaseResult[]> {
  return runForm(FILL, ctx)
}

/** The crafted data: 3 hours of one symbol, one record every 10 s, from the data sets' start. */
const CRAFTED_SHAPE = dataShape(3 / 24, 1)

/**
 * The crafted records: values from five levels (each bucket's high and low
 * are ties), one record in 13 moved onto its predecessor's millisecond, and
 * two gaps: minutes 35–57 (an empty ten-minute bucket) and 60–124 (an empty
 * hour).
 */
function craftedRecords(): GeneratedRecord[] {
  const out: GeneratedRecord[] = []
  let i = 0
  for (const batch of generateBatches(CRAFTED_SHAPE, 10_000, 0xc0ffee)) {
    for (const record of batch) {
      const minute = (record.timestamp - CRAFTED_SHAPE.from) / 60_000
      const index = i++
      if ((minute >= 35 && minute < 58) || (minute >= 60 && minute < 125)) continue
      const previous = out[out.length - 1]
      const timestamp = index % 13 === 5 && previous !== undefined ? previous.timestamp : record.timestamp
      out.push({ ...record, timestamp, value: 100 + ((index * 7919) % 5) })
    }
  }
  return out
}

/** Windows over the crafted data: whole, unaligned, starting in a gap, running past either end, wholly after it. */
function craftedWindows(interval: number): RangeParam[] {
  const symbol = CRAFTED_SHAPE.symbols[0] as string
  const start = CRAFTED_SHAPE.from
  const end = CRAFTED_SHAPE.to
  const minute = 60_000
  const window = (from: number, to: number): RangeParam => ({ symbol, from, to, interval })
  return [
    window(start, end),
    window(start + 7 * minute + 3_000, start + 161 * minute + 7),
    window(start + 45 * minute, start + 170 * minute),
    window(start + 61 * minute + 5_000, end + 2 * HOUR_MS),
    window(start - 2 * HOUR_MS, start + 30 * minute),
    window(end + HOUR_MS, end + 5 * HOUR_MS),
  ]
}

/**
 * Loads the crafted records into a scratch store and scratch SQLite files
 * (both layouts) and checks, for each interval, that every plan of `form`
 * returns the store's answer on every crafted window. Returns the number of
 * windows checked; throws at the first difference.
 */
async function checkOnCraftedData<S extends string>(form: Form<S>, intervals: readonly number[]): Promise<number> {
  const dir = join(DATA_DIR, `crafted-${form.family}-${process.pid}`)
  await rm(dir, { recursive: true, force: true })
  await mkdir(dir, { recursive: true })
  const records = craftedRecords()
  const store = await PriceStore.open(join(dir, 'store'), { provider: BENCH_PROVIDER })
  const sqlite = {} as Record<SqliteLayout, SqliteBaseline>
  try {
    await store.putMany(records)
    for (const layout of SQLITE_LAYOUTS) {
      sqlite[layout] = SqliteBaseline.open(join(dir, `${layout}.db`), layout, BENCH_PROVIDER)
      sqlite[layout].insertMany(records)
      sqlite[layout].finishLoad()
    }
    let checked = 0
    for (const interval of intervals) {
      const params = craftedWindows(interval)
      checked += await checkPlansAgree(`${form.family} at ${interval} ms, crafted data`, (p) => form.store(store, p), plansOf(form, sqlite), params)
    }
    return checked
  } finally {
    await store.close()
    for (const db of Object.values(sqlite)) db.close()
    await rm(dir, { recursive: true, force: true })
  }
}
