/**
 * Latest-N and history (as-of): `store.latest(symbol, { limit, to })`
 * against `ORDER BY timestamp DESC, id DESC LIMIT ?` and a reverse
 * limit-N iteration of the same keys with no decoding.
 */
import type { PriceRecord } from '../src/index.js'
import { randomSymbol, randomTime, sqlitePlans } from './context.js'
import type { FamilyContext, QueryContext } from './context.js'
import { ticksIn } from './generate.js'
import { runCases } from './measure.js'
import type { CaseDefinition, CaseResult, QueryCase } from './measure.js'

export interface LatestParam {
  readonly symbol: string
  readonly limit: number
  readonly to?: number
}

const options = (p: LatestParam): { limit: number; to?: number } => (p.to === undefined ? { limit: p.limit } : { limit: p.limit, to: p.to })

/** The latest cases, store side (full runs and store-only runs). */
export function latestCases(ctx: QueryContext): QueryCase<LatestParam>[] {
  const params = (limit: number, asOf = false): LatestParam[] =>
    Array.from({ length: 512 }, () => ({
      symbol: randomSymbol(ctx),
      limit,
      ...(asOf ? { to: randomTime(ctx, ctx.shape.from, ctx.shape.to) } : {}),
    }))
  const latestCase = (name: string, list: LatestParam[], extra: Partial<QueryCase<LatestParam>>): QueryCase<LatestParam> => ({
    name,
    params: list,
    store: (p) => ctx.store.latest(p.symbol, options(p)),
    count: (answer) => (answer as PriceRecord[]).length,
    expected: (p) => Math.min(p.limit, ticksIn(ctx.shape, ctx.shape.from, p.to ?? ctx.shape.to)),
    ...extra,
  })
  return [
    latestCase('latest-1', params(1), {
      targets: [{ against: 'sqlite', maxRatio: 1 / 5, text: '≥ 5× faster than SQLite' }],
    }),
    latestCase('latest-100', params(100), {
      targets: [{ against: 'sqlite', maxRatio: 1 / 2, text: '≥ 2× faster than SQLite' }],
    }),
    latestCase('history as-of (symbol + toTimestamp)', params(1, true), {
      note: 'the price at or before a random toTimestamp',
    }),
  ]
}

export function runLatest(ctx: FamilyContext): Promise<CaseResult[]> {
  return runCases('latest', latestCases(ctx), ctx.budget, (base): CaseDefinition<LatestParam> => ({
    ...base,
    sqlite: sqlitePlans(ctx, undefined, (db, p: LatestParam) => db.latest(p.symbol, options(p))),
    floor: (p) => ctx.floor.scan(p.symbol, undefined, p.to, true, p.limit),
    floorCheck: 'at-least',
  }))
}
