/**
 * The query cases with the store alone (`run.ts --store-only`, issue 9:
 * how cost grows with the data): no SQLite data set, no floor twin, so a
 * size SQLite was never built for (28 days) can be measured.
 *
 * The cases are those of latest.bench.ts, several.bench.ts, range.bench.ts,
 * candles-fill.bench.ts and stream.bench.ts, built by the same functions
 * (`latestCases` and the like): the same names and, for the same seed and
 * data size, the same parameters drawn in the same order, so a store-only
 * run compares case by case with a full run. The loops are measure.ts's
 * {@link runLoops}.
 *
 * With no SQLite to compare answers with, a sample of answers is checked for
 * the number of records the generated data implies (each case's
 * `expected`), so a store that answers short cannot look fast.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { candlesCases, fillCases } from './candles-fill.bench.js'
import type { QueryContext } from './context.js'
import { latestCases } from './latest.bench.js'
import { anonPeakMB, resetRssPeak, runLoops, sampleRss, stats, timeCall } from './measure.js'
import type { Budget, QueryCase, Stats } from './measure.js'
import { rangeCases } from './range.bench.js'
import { severalCases } from './several.bench.js'
import { streamCases } from './stream.bench.js'

/** One case, store only. A full run's {@link CaseResult} has these fields too, so the comparison reads either. */
export interface StoreCaseResult {
  readonly family: string
  readonly name: string
  readonly recordsPerOp: number
  readonly warm: { readonly store: Stats }
  readonly spaced: { readonly store: Stats }
  readonly checkedCalls: number
  readonly peakRssMB: number
  readonly peakAnonMB: number
  readonly note?: string
}

export type StoreFamily = 'latest' | 'several' | 'range' | 'candles' | 'fill' | 'stream'

/**
 * Runs one case as measure.ts's `runCase` does, minus the other contenders
 * and the calibration: the same loops on the same budget, the same sample
 * of calls checked (against `expected`).
 */
export async function runStoreCase<P>(family: string, def: QueryCase<P>, budget: Budget): Promise<StoreCaseResult> {
  resetRssPeak()
  sampleRss()
  let checked = 0
  const loops = await runLoops(def, budget, (): number[] => [], async ({ param, spacingMs, times, check }) => {
    if (spacingMs > 0) await sleep(spacingMs)
    const [time, answer] = await timeCall(() => def.store(param))
    times?.push(time)
    const count = def.count(answer)
    if (check) {
      const expected = def.expected(param)
      if (count !== expected) throw new Error(`${def.name}: the store answered ${count} records, the data holds ${expected} (parameters ${JSON.stringify(param)})`)
      checked++
    }
    return count
  })
  return {
    family,
    name: def.name,
    recordsPerOp: loops.recordsPerOp,
    warm: { store: stats(loops.warm) },
    spaced: { store: stats(loops.spaced) },
    checkedCalls: checked,
    peakRssMB: Math.round(sampleRss()),
    peakAnonMB: Math.round(anonPeakMB()),
    ...(def.note === undefined ? {} : { note: def.note }),
  }
}

/** Runs a family's cases one after the other. */
async function runAll<P>(family: StoreFamily, definitions: readonly QueryCase<P>[], budget: Budget): Promise<StoreCaseResult[]> {
  const results: StoreCaseResult[] = []
  for (const definition of definitions) results.push(await runStoreCase(family, definition, budget))
  return results
}

/** Builds one family's cases (all parameters drawn first, as in a full run) and runs them. */
export function runStoreFamily(family: StoreFamily, ctx: QueryContext): Promise<StoreCaseResult[]> {
  switch (family) {
    case 'latest':
      return runAll(family, latestCases(ctx), ctx.budget)
    case 'several':
      return runAll(family, severalCases(ctx), ctx.budget)
    case 'range':
      return runAll(family, rangeCases(ctx), ctx.budget)
    case 'candles':
      return runAll(family, candlesCases(ctx), ctx.budget)
    case 'fill':
      return runAll(family, fillCases(ctx), ctx.budget)
    case 'stream':
      return runAll(family, streamCases(ctx), ctx.budget)
  }
}
