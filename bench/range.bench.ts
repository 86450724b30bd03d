/**
 * The range form: one record per epoch-aligned bucket. SQLite tries a
 * `LIMIT 1` seek per non-empty bucket, a scan with bucketing in JS (full
 * rows, or keys then the chosen rows), and a recursive-CTE bucket list with
 * `CAST(? AS INTEGER)` arithmetic, on both layouts, and the fastest is
 * measured. The floor is the raw iteration of the whole key range for dense
 * buckets, and one concurrent limit-1 seek per bucket for sparse ones.
 */
import type { SampledRecord } from '../src/index.js'
import { randomSymbol, randomTime, sqlitePlans } from './context.js'
import type { FamilyContext, QueryContext } from './context.js'
import { DAY_MS, HOUR_MS, STEP_MS, recordsInRange } from './generate.js'
import { runCases } from './measure.js'
import type { CaseDefinition, CaseResult, QueryCase, Target } from './measure.js'
import { RANGE_STRATEGIES, SqliteBaseline } from './sqlite-baseline.js'

export interface RangeParam {
  readonly symbol: string
  readonly from: number
  readonly to: number
  readonly interval: number
}

/** A range case: its parameters all share one interval. */
export interface RangeCase extends QueryCase<RangeParam> {
  readonly interval: number
  /** The shape it was drawn for, e.g. `24 h at 10 min` (its name may add that it was clamped). */
  readonly shape: string
  /** The span of its windows (ms): the shape's, or the data's when clamped. */
  readonly span: number
}

const MINUTE_MS = 60_000
const faster = (times: number): Target => ({ against: 'sqlite', maxRatio: 1 / times, text: `≥ ${times}× faster than SQLite` })

/**
 * The range cases, store side (full runs and store-only runs). A span
 * longer than the data is clamped to it in a quick run; otherwise a case
 * over more than a day is skipped, with a note.
 */
export function rangeCases(ctx: QueryContext): RangeCase[] {
  const dataSpan = ctx.shape.to - ctx.shape.from + STEP_MS
  const shapes: { label: string; span: number; interval: number; targets: Target[] }[] = [
    { label: '24 h at 1 ms', span: DAY_MS, interval: 1, targets: [faster(1.2), { against: 'floor', maxRatio: 2, text: 'within 2× of the floor' }] },
    { label: '24 h at 10 min', span: DAY_MS, interval: 10 * MINUTE_MS, targets: [faster(2)] },
    { label: '24 h at 1 h', span: DAY_MS, interval: HOUR_MS, targets: [faster(2)] },
    { label: '7 d at 1 h', span: 7 * DAY_MS, interval: HOUR_MS, targets: [faster(2)] },
  ]
  const cases: RangeCase[] = []
  for (const shape of shapes) {
    let span = shape.span
    let label = `range ${shape.label}`
    if (span > dataSpan) {
      if (shape.span > DAY_MS && !ctx.quick) {
        ctx.note(`range ${shape.label}: skipped, the data set holds only ${ctx.shape.days} day(s) (run with --days 7)`)
        continue
      }
      span = dataSpan
      label = `${label} (clamped to the ${(dataSpan / HOUR_MS).toFixed(1)} h of data)`
    }
    const params: RangeParam[] = Array.from({ length: 64 }, () => {
      const from = randomTime(ctx, ctx.shape.from, ctx.shape.to + STEP_MS - span)
      return { symbol: randomSymbol(ctx), from, to: from + span - 1, interval: shape.interval }
    })
    cases.push({
      name: label,
      params,
      interval: shape.interval,
      shape: shape.label,
      span,
      store: (p) => ctx.store.range(p.symbol, { from: p.from, to: p.to, interval: p.interval }),
      count: (answer) => (answer as SampledRecord[]).length,
      expected: (p) => recordsInRange(ctx.shape, p.from, p.to, p.interval),
      targets: shape.targets,
    })
  }
  return cases
}

export function runRange(ctx: FamilyContext): Promise<CaseResult[]> {
  return runCases('range', rangeCases(ctx), ctx.budget, (base): CaseDefinition<RangeParam> => {
    const dense = base.interval <= STEP_MS
    return {
      ...base,
      sqlite: sqlitePlans(
        ctx,
        RANGE_STRATEGIES,
        (db, p: RangeParam, strategy) => db.range(p.symbol, p.from, p.to, p.interval, strategy),
        (p, strategy) => SqliteBaseline.rangeStrategyApplies(strategy, p.from, p.to, p.interval),
      ),
      floor: dense
        ? (p) => ctx.floor.scan(p.symbol, p.from, p.to, false)
        : (p) => ctx.floor.seekPerBucket(p.symbol, p.from, p.to, p.interval),
      floorCheck: 'at-least',
      note: dense ? 'floor: iterate the range' : 'floor: one concurrent limit-1 seek per bucket',
    }
  })
}
