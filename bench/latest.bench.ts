/**
 * Latest-N and history (as-of): `store.latest(symbol, { limit, to })`
 * against `ORDER BY timestamp DESC, id DESC LIMIT ?` and a reverse
 * limit-N iteration of the same keys with no decoding.
 */
import type { PriceRecord } from '../src/index.js'
import { randomSymbol, randomTime, sqlitePlans } from './context.js'
import type { FamilyContext } from './context.js'
import { runCase } from './measure.js'
import type { CaseDefinition, CaseResult } from './measure.js'

interface LatestParam {
  readonly symbol: string
  readonly limit: number
  readonly to?: number
}

const count = (answer: unknown): number => (answer as PriceRecord[]).length

function latestCase(ctx: FamilyContext, name: string, params: LatestParam[], extra: Partial<CaseDefinition<LatestParam>>): CaseDefinition<LatestParam> {
  const options = (p: LatestParam): { limit: number; to?: number } => (p.to === undefined ? { limit: p.limit } : { limit: p.limit, to: p.to })
  return {
    name,
    params,
    store: (p) => ctx.store.latest(p.symbol, options(p)),
    sqlite: sqlitePlans(ctx, undefined, (db, p: LatestParam) => db.latest(p.symbol, options(p))),
    floor: (p) => ctx.floor.scan(p.symbol, undefined, p.to, true, p.limit),
    floorCheck: 'at-least',
    count,
    ...extra,
  }
}

export async function runLatest(ctx: FamilyContext): Promise<CaseResult[]> {
  const params = (limit: number, asOf = false): LatestParam[] =>
    Array.from({ length: 512 }, () => ({
      symbol: randomSymbol(ctx),
      limit,
      ...(asOf ? { to: randomTime(ctx, ctx.shape.from, ctx.shape.to) } : {}),
    }))
  const cases = [
    latestCase(ctx, 'latest-1', params(1), {
      targets: [{ against: 'sqlite', maxRatio: 1 / 5, text: '≥ 5× faster than SQLite' }],
    }),
    latestCase(ctx, 'latest-100', params(100), {
      targets: [{ against: 'sqlite', maxRatio: 1 / 2, text: '≥ 2× faster than SQLite' }],
    }),
    latestCase(ctx, 'history as-of (symbol + toTimestamp)', params(1, true), {
      note: 'the price at or before a random toTimestamp',
    }),
  ]
  const results: CaseResult[] = []
  for (const definition of cases) results.push(await runCase('latest', definition, ctx.budget))
  return results
}
