/**
 * The several-tokens form: the latest record of 20 or 100 named symbols,
 * and of every symbol. SQLite answers with one `json_each` statement (or a
 * loop of prepared latest-1 statements, whichever is faster); the floor
 * runs one reverse limit-1 iteration per symbol, all in flight at once.
 */
import type { PriceRecord } from '../src/index.js'
import { sqlitePlans } from './context.js'
import type { FamilyContext } from './context.js'
import { runCase } from './measure.js'
import type { CaseDefinition, CaseResult } from './measure.js'
import { SEVERAL_STRATEGIES } from './sqlite-baseline.js'

const count = (answer: unknown): number => Object.keys(answer as Record<string, PriceRecord>).length

export async function runSeveral(ctx: FamilyContext): Promise<CaseResult[]> {
  const named = (n: number): CaseDefinition<readonly string[]> => ({
    name: `several ×${n}`,
    params: Array.from({ length: 128 }, () => ctx.random.shuffled(ctx.shape.symbols).slice(0, n)),
    store: (symbols) => ctx.store.several(symbols),
    sqlite: sqlitePlans(ctx, SEVERAL_STRATEGIES, (db, symbols: readonly string[], strategy) => db.several(symbols, strategy)),
    floor: (symbols) => ctx.floor.newestOfEach(symbols),
    floorCheck: 'at-least',
    count,
    ordered: true,
    ...(n >= 100 ? { targets: [{ against: 'sqlite', maxRatio: 1 / 5, text: '≥ 5× faster than SQLite' }] } : {}),
  })
  const sortedSymbols = [...ctx.shape.symbols].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)))
  const all: CaseDefinition<null> = {
    name: 'all symbols',
    params: [null],
    store: () => ctx.store.several(),
    sqlite: sqlitePlans(ctx, SEVERAL_STRATEGIES, (db, _: null, strategy) => db.all(strategy)),
    floor: () => ctx.floor.newestOfEach(sortedSymbols),
    floorCheck: 'at-least',
    count,
    ordered: true,
    targets: [{ against: 'sqlite', maxRatio: 1 / 5, text: '≥ 5× faster than SQLite' }],
  }
  const results: CaseResult[] = []
  for (const definition of [named(20), named(ctx.shape.symbols.length), all]) {
    results.push(await runCase('several', definition as CaseDefinition<unknown>, ctx.budget))
  }
  return results
}
