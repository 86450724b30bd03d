import type { PriceRecord, SeveralQuery } from '../../types.js'
import { NOT_NOW, lookup, lookupNow, lookupReads } from '../kernels/lookup.js'
import { inBatches, keyedBySymbol } from '../kernels/per-symbol.js'
import { selectRecordsBySymbol } from '../kernels/select-fields.js'
import type { PlanOf } from '../query-plan.js'
import type { ScanRow, ScanSource } from '../scan-source.js'
import type { QueryForm } from './query-form.js'

/**
 * The several-tokens form: the latest record of each symbol in the window
 * (or, with `asOf`, the as-of lookup of each), keyed by symbol; symbols
 * without one are left out.
 */
export const several: QueryForm<SeveralQuery> = {
  answerForm: () => 'several',
  symbols: (query) => query.symbols,
  reads: (query) => lookupReads(query, 1),
  cost: (plan, counts) => (plan.query.symbols === 'all' ? counts.symbols.length : plan.query.symbols.length) * plan.reads.length,
  run: severalLatest,
  selectFields: (answer, _query, select) => selectRecordsBySymbol(answer, select),
  costReadsNoRecords: true,
}

/** The latest (or as-of) record of each symbol, keyed by symbol; symbols without one are left out. */
async function severalLatest(plan: PlanOf<SeveralQuery>, source: ScanSource): Promise<Record<string, PriceRecord>> {
  const { query } = plan
  const symbols = query.symbols === 'all' ? await source.symbols() : query.symbols
  const found: (ScanRow | undefined)[] = new Array(symbols.length)
  // Symbols a synchronous read cannot answer are read in batches of concurrent scans.
  const waiting: number[] = []
  symbols.forEach((symbol, i) => {
    const row = lookupNow(source, symbol, plan)
    if (row === NOT_NOW) waiting.push(i)
    else found[i] = row
  })
  await inBatches(waiting, async (i) => {
    found[i] = await lookup(source, symbols[i] as string, plan)
  })
  return keyedBySymbol(symbols, found, recordOf)
}

/** A found row as the answer holds it (module-level: no closure per query). */
function recordOf(row: ScanRow): PriceRecord {
  return row.record()
}
