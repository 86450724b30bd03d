import type { Twap, TwapQuery } from '../../types.js'
import { READ_COST } from '../data-counts.js'
import { inBatches, keyedBySymbol } from '../kernels/per-symbol.js'
import { forEachRow, rowsOf } from '../kernels/rows.js'
import { selectTwaps } from '../kernels/select-fields.js'
import { TwapBuilder } from '../kernels/twap.js'
import { frozenReads, type PlanOf } from '../query-plan.js'
import type { ScanSource } from '../scan-source.js'
import type { QueryForm } from './query-form.js'

/** The time-weighted average of each symbol over `from..to`, keyed by symbol; symbols with no record in force are left out. */
export const twap: QueryForm<TwapQuery> = {
  answerForm: () => 'twap',
  symbols: (query) => query.symbols,
  // The record in force at `from` may be at `from` itself; the window read starts after it.
  reads: (query) => frozenReads([
    { role: 'carry', to: query.from, reverse: true, limit: 1 },
    ...(query.to > query.from ? [{ role: 'main' as const, from: query.from + 1, to: query.to, reverse: false }] : []),
  ]),
  cost: (plan, counts) => {
    const { query } = plan
    const symbols = query.symbols === 'all' ? counts.symbols : query.symbols
    let read = 0
    for (const symbol of symbols) read += counts.records(symbol, query.from, query.to) + 1
    return symbols.length + read * READ_COST
  },
  run: twaps,
  selectFields: (answer, _query, select) => selectTwaps(answer, select),
}

async function twaps(plan: PlanOf<TwapQuery>, source: ScanSource): Promise<Record<string, Twap>> {
  const { query } = plan
  const symbols = query.symbols === 'all' ? await source.symbols() : query.symbols
  const found: (Twap | undefined)[] = new Array(symbols.length)
  await inBatches(symbols.map((_, i) => i), async (i) => {
    const symbol = symbols[i] as string
    const builder = new TwapBuilder(query.from, query.to)
    // A TWAP reads each row's timestamp and value alone: no record body.
    for (const read of plan.reads) await forEachRow(rowsOf(source, symbol, { ...read, refs: true }), (row) => (builder.push(row), true))
    found[i] = builder.finish()
  })
  return keyedBySymbol(symbols, found, asIs)
}

/** A TWAP as the answer holds it. */
function asIs(average: Twap): Twap {
  return average
}
