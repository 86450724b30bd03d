/**
 * Streaming range throughput: `store.rangeStream(symbol, { interval: 1 })`
 * over up to 7 days of one symbol, against SQLite's `iterate()` building the
 * same records and the raw iteration of the key range. Reported as records/s.
 */
import type { SampledRecord } from '../src/index.js'
import { randomSymbol, sqlitePlans } from './context.js'
import type { FamilyContext, QueryContext } from './context.js'
import { DAY_MS, HOUR_MS, STEP_MS, ticksIn } from './generate.js'
import { runCases } from './measure.js'
import type { CaseDefinition, CaseResult, QueryCase } from './measure.js'

export interface StreamParam {
  readonly symbol: string
  readonly from: number
  readonly to: number
}

/** What a consumer of the stream keeps for the check: the count and both ends. */
interface StreamSummary {
  count: number
  first?: SampledRecord
  last?: SampledRecord
}

function summarise(summary: StreamSummary, record: SampledRecord): void {
  if (summary.count === 0) summary.first = record
  summary.last = record
  summary.count++
}

/** The stream case, store side (full runs and store-only runs): up to 7 days from the data's start. */
export function streamCases(ctx: QueryContext): QueryCase<StreamParam>[] {
  const span = Math.min(7 * DAY_MS, ctx.shape.to - ctx.shape.from + STEP_MS)
  const params: StreamParam[] = Array.from({ length: 16 }, () => ({ symbol: randomSymbol(ctx), from: ctx.shape.from, to: ctx.shape.from + span - 1 }))
  return [
    {
      name: `stream ${(span / HOUR_MS).toFixed(0)} h of one symbol, interval 1`,
      params,
      store: async (p) => {
        const summary: StreamSummary = { count: 0 }
        for await (const record of ctx.store.rangeStream(p.symbol, { from: p.from, to: p.to, interval: 1 })) summarise(summary, record)
        return summary
      },
      count: (answer) => (answer as StreamSummary).count,
      expected: (p) => ticksIn(ctx.shape, p.from, p.to),
      minIterations: 8,
      note: 'records/s = records per call / median time',
    },
  ]
}

export function runStream(ctx: FamilyContext): Promise<CaseResult[]> {
  return runCases('stream', streamCases(ctx), ctx.budget, (base): CaseDefinition<StreamParam> => ({
    ...base,
    sqlite: sqlitePlans(ctx, undefined, (db, p: StreamParam) => {
      const summary: StreamSummary = { count: 0 }
      for (const record of db.rangeStream(p.symbol, p.from, p.to, 1)) summarise(summary, record)
      return summary
    }),
    floor: (p) => ctx.floor.scan(p.symbol, p.from, p.to, false),
    floorCheck: 'at-least',
  }))
}
