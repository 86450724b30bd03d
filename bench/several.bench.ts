/**
 * The several-tokens form: the latest record of 20 or 100 named symbols,
 * and of every symbol. SQLite answers with one `json_each` statement (or a
 * loop of prepared latest-1 statements, whichever is faster); the floor
 * runs one reverse limit-1 iteration per symbol, all in flight at once.
 */
import type { PriceRecord } from '../src/index.js'
import { sqlitePlans } from './context.js'
import type { FamilyContext, QueryContext } from './context.js'
import { runCases } from './measure.js'
import type { CaseDefinition, CaseResult, QueryCase, Target } from './measure.js'
import { SEVERAL_STRATEGIES } from './sqlite-baseline.js'

/** The symbols named, or null for every symbol (`store.several()` with no list). */
export type SeveralParam = readonly string[] | null

const count = (answer: unknown): number => Object.keys(answer as Record<string, PriceRecord>).length
const fiveTimes: Target = { against: 'sqlite', maxRatio: 1 / 5, text: '≥ 5× faster than SQLite' }

/** The several-tokens cases, store side (full runs and store-only runs). */
export function severalCases(ctx: QueryContext): QueryCase<SeveralParam>[] {
  const named = (n: number): QueryCase<SeveralParam> => ({
    name: `several ×${n}`,
    params: Array.from({ length: 128 }, () => ctx.random.shuffled(ctx.shape.symbols).slice(0, n)),
    store: (symbols) => ctx.store.several(symbols ?? undefined),
    count,
    expected: (symbols) => symbols?.length ?? 0,
    ...(n >= 100 ? { targets: [fiveTimes] } : {}),
  })
  const all: QueryCase<SeveralParam> = {
    name: 'all symbols',
    params: [null],
    store: () => ctx.store.several(),
    count,
    expected: () => ctx.shape.symbols.length,
    targets: [fiveTimes],
  }
  return [named(20), named(ctx.shape.symbols.length), all]
}

export function runSeveral(ctx: FamilyContext): Promise<CaseResult[]> {
  const sortedSymbols = [...ctx.shape.symbols].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)))
  return runCases('several', severalCases(ctx), ctx.budget, (base): CaseDefinition<SeveralParam> => ({
    ...base,
    sqlite: sqlitePlans(ctx, SEVERAL_STRATEGIES, (db, symbols: SeveralParam, strategy) =>
      symbols === null ? db.all(strategy) : db.several(symbols, strategy),
    ),
    floor: (symbols) => ctx.floor.newestOfEach(symbols ?? sortedSymbols),
    floorCheck: 'at-least',
    ordered: true,
  }))
}
