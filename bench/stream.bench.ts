/**
 * Streaming range throughput: `store.rangeStream(symbol, { interval: 1 })`
 * over up to 7 days of one symbol, against SQLite's `iterate()` building the
 * same records and the raw iteration of the key range. Reported as records/s.
 */
import type { SampledRecord } from '../src/index.js'
import { randomSymbol, sqlitePlans } from './context.js'
import type { FamilyContext } from './context.js'
import { DAY_MS, HOUR_MS, STEP_MS } from './generate.js'
import { runCase } from './measure.js'
import type { CaseResult } from './measure.js'

interface StreamParam {
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

export async function runStream(ctx: FamilyContext): Promise<CaseResult[]> {
  const span = Math.min(7 * DAY_MS, ctx.shape.to - ctx.shape.from + STEP_MS)
  const params: StreamParam[] = Array.from({ length: 16 }, () => ({ symbol: randomSymbol(ctx), from: ctx.shape.from, to: ctx.shape.from + span - 1 }))
  const result = await runCase(
    'stream',
    {
      name: `stream ${(span / HOUR_MS).toFixed(0)} h of one symbol, interval 1`,
      params,
      store: async (p) => {
        const summary: StreamSummary = { count: 0 }
        for await (const record of ctx.store.rangeStream(p.symbol, { from: p.from, to: p.to, interval: 1 })) summarise(summary, record)
        return summary
      },
      sqlite: sqlitePlans(ctx, undefined, (db, p: StreamParam) => {
        const summary: StreamSummary = { count: 0 }
        for (const record of db.rangeStream(p.symbol, p.from, p.to, 1)) summarise(summary, record)
        return summary
      }),
      floor: (p) => ctx.floor.scan(p.symbol, p.from, p.to, false),
      floorCheck: 'at-least',
      count: (answer) => (answer as StreamSummary).count,
      minIterations: 8,
      note: 'records/s = records per call / median time',
    },
    ctx.budget,
  )
  return [result]
}
