/**
 * The query cases with the store alone (`run.ts --store-only`, issue 9:
 * how cost grows with the data): no SQLite data set, no floor twin, so a
 * size SQLite was never built for (28 days) can be measured.
 *
 * The cases are those of latest.bench.ts, several.bench.ts, range.bench.ts
 * and stream.bench.ts, with the same names and, for the same seed and data
 * size, the same parameters (the random draws are made in the same order),
 * so a store-only run compares case by case with a full run. Keep them in
 * step when those files change.
 *
 * With no SQLite to compare answers with, a sample of answers is checked for
 * the number of records the generated data implies (one record per symbol
 * every 10 s), so a store that answers short cannot look fast.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import type { PriceStore, SampledRecord } from '../src/index.js'
import { DAY_MS, HOUR_MS, STEP_MS } from './generate.js'
import type { DataShape, Random } from './generate.js'
import { anonPeakMB, resetRssPeak, sampleRss, stats } from './measure.js'
import type { Budget, Stats } from './measure.js'

/** What a store-only family gets: a {@link FamilyContext} without SQLite and the floor. */
export interface StoreContext {
  readonly shape: DataShape
  readonly store: PriceStore
  readonly budget: Budget
  readonly random: Random
  readonly quick: boolean
  note(text: string): void
}

export interface StoreCaseDefinition<P> {
  readonly name: string
  /** Random parameter sets; iteration i uses params[i % length]. */
  readonly params: readonly P[]
  store(param: P): Promise<unknown>
  /** Records in an answer. */
  count(answer: unknown): number
  /** Records the data holds for this call. */
  expected(param: P): number
  readonly minIterations?: number
  readonly note?: string
}

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

export type StoreFamily = 'latest' | 'several' | 'range' | 'stream'

function nowUs(): number {
  return Number(process.hrtime.bigint()) / 1000
}

/**
 * Runs one case as measure.ts's `runCase` does, minus the other contenders:
 * warm-up over every parameter set, the warm loop and the spaced loop, on
 * the same budget. Checks the first calls and one call in 16 after that.
 */
export async function runStoreCase<P>(family: string, def: StoreCaseDefinition<P>, budget: Budget): Promise<StoreCaseResult> {
  resetRssPeak()
  sampleRss()
  let checked = 0
  let recordsSeen = 0
  let answersSeen = 0
  const iterate = async (iteration: number, spacingMs: number, times: number[] | undefined): Promise<void> => {
    const param = def.params[iteration % def.params.length] as P
    if (spacingMs > 0) await sleep(spacingMs)
    const start = nowUs()
    const answer = await def.store(param)
    times?.push(nowUs() - start)
    const count = def.count(answer)
    recordsSeen += count
    answersSeen++
    if (times === undefined || iteration < 8 || iteration % 16 === 0) {
      const expected = def.expected(param)
      if (count !== expected) throw new Error(`${def.name}: the store answered ${count} records, the data holds ${expected} (parameters ${JSON.stringify(param)})`)
      checked++
    }
    if (iteration % 8 === 0) sampleRss()
  }

  const warmupStart = Date.now()
  for (let i = 0; i < budget.warmup || (i < def.params.length && Date.now() - warmupStart < budget.warmupMs); i++) await iterate(i, 0, undefined)

  const loop = async (ms: number, spacingMs: number): Promise<Stats> => {
    const times: number[] = []
    const start = Date.now()
    let i = 0
    const minimum = Math.min(def.minIterations ?? budget.minIterations, budget.minIterations)
    while (i < budget.maxIterations && (i < minimum || Date.now() - start < ms)) await iterate(i++, spacingMs, times)
    return stats(times)
  }
  const warm = await loop(budget.warmMs, 0)
  const spaced = await loop(budget.spacedMs, budget.spacingMs)
  return {
    family,
    name: def.name,
    recordsPerOp: recordsSeen / Math.max(1, answersSeen),
    warm: { store: warm },
    spaced: { store: spaced },
    checkedCalls: checked,
    peakRssMB: Math.round(sampleRss()),
    peakAnonMB: Math.round(anonPeakMB()),
    ...(def.note === undefined ? {} : { note: def.note }),
  }
}

/** A random symbol (context.ts's `randomSymbol`, same draw). */
function randomSymbol(ctx: StoreContext): string {
  return ctx.shape.symbols[ctx.random.int(ctx.shape.symbols.length)] as string
}

/** A random integer timestamp in [lo, hi] (context.ts's `randomTime`, same draw). */
function randomTime(ctx: StoreContext, lo: number, hi: number): number {
  return lo + Math.floor(ctx.random.next() * (hi - lo + 1))
}

/** Generated ticks (one record per symbol each) with a timestamp in [lo, hi]. */
function ticksIn(shape: DataShape, lo: number, hi: number): number {
  const first = Math.ceil((Math.max(lo, shape.from) - shape.from) / STEP_MS)
  const last = Math.floor((Math.min(hi, shape.to) - shape.from) / STEP_MS)
  return Math.max(0, last - first + 1)
}

/**
 * Records of one symbol a range of [from, to] at `interval` answers: one per
 * non-empty epoch-aligned bucket. A bucket at least one tick wide always
 * holds a tick; a narrower one holds at most one.
 */
function recordsInRange(shape: DataShape, from: number, to: number, interval: number): number {
  const ticks = ticksIn(shape, from, to)
  if (ticks === 0 || interval < STEP_MS) return ticks
  const first = shape.from + Math.ceil((Math.max(from, shape.from) - shape.from) / STEP_MS) * STEP_MS
  const last = first + (ticks - 1) * STEP_MS
  return Math.floor(last / interval) - Math.floor(first / interval) + 1
}

const arrayLength = (answer: unknown): number => (answer as readonly unknown[]).length
const keyCount = (answer: unknown): number => Object.keys(answer as object).length

interface LatestParam {
  readonly symbol: string
  readonly limit: number
  readonly to?: number
}

/** latest.bench.ts's cases. */
function latestCases(ctx: StoreContext): StoreCaseDefinition<LatestParam>[] {
  const params = (limit: number, asOf = false): LatestParam[] =>
    Array.from({ length: 512 }, () => ({
      symbol: randomSymbol(ctx),
      limit,
      ...(asOf ? { to: randomTime(ctx, ctx.shape.from, ctx.shape.to) } : {}),
    }))
  const latestCase = (name: string, list: LatestParam[], note?: string): StoreCaseDefinition<LatestParam> => ({
    name,
    params: list,
    store: (p) => ctx.store.latest(p.symbol, p.to === undefined ? { limit: p.limit } : { limit: p.limit, to: p.to }),
    count: arrayLength,
    expected: (p) => Math.min(p.limit, ticksIn(ctx.shape, ctx.shape.from, p.to ?? ctx.shape.to)),
    ...(note === undefined ? {} : { note }),
  })
  return [
    latestCase('latest-1', params(1)),
    latestCase('latest-100', params(100)),
    latestCase('history as-of (symbol + toTimestamp)', params(1, true), 'the price at or before a random toTimestamp'),
  ]
}

/** several.bench.ts's cases. */
function severalCases(ctx: StoreContext): StoreCaseDefinition<readonly string[] | null>[] {
  const named = (n: number): StoreCaseDefinition<readonly string[] | null> => ({
    name: `several ×${n}`,
    params: Array.from({ length: 128 }, () => ctx.random.shuffled(ctx.shape.symbols).slice(0, n)),
    store: (symbols) => ctx.store.several(symbols ?? undefined),
    count: keyCount,
    expected: (symbols) => symbols?.length ?? 0,
  })
  const all: StoreCaseDefinition<readonly string[] | null> = {
    name: 'all symbols',
    params: [null],
    store: () => ctx.store.several(),
    count: keyCount,
    expected: () => ctx.shape.symbols.length,
  }
  return [named(20), named(ctx.shape.symbols.length), all]
}

interface RangeParam {
  readonly symbol: string
  readonly from: number
  readonly to: number
  readonly interval: number
}

/** range.bench.ts's cases (skipped and clamped the same way). */
function rangeCases(ctx: StoreContext): StoreCaseDefinition<RangeParam>[] {
  const dataSpan = ctx.shape.to - ctx.shape.from + STEP_MS
  const shapes: { label: string; span: number; interval: number }[] = [
    { label: '24 h at 1 ms', span: DAY_MS, interval: 1 },
    { label: '24 h at 10 min', span: DAY_MS, interval: 10 * 60_000 },
    { label: '24 h at 1 h', span: DAY_MS, interval: HOUR_MS },
    { label: '7 d at 1 h', span: 7 * DAY_MS, interval: HOUR_MS },
  ]
  const cases: StoreCaseDefinition<RangeParam>[] = []
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
      store: (p) => ctx.store.range(p.symbol, { from: p.from, to: p.to, interval: p.interval }),
      count: arrayLength,
      expected: (p) => recordsInRange(ctx.shape, p.from, p.to, p.interval),
    })
  }
  return cases
}

interface StreamParam {
  readonly symbol: string
  readonly from: number
  readonly to: number
}

/** What a consumer of the stream keeps, as in stream.bench.ts (the same work per record): the count and both ends. */
interface StreamSummary {
  count: number
  first?: SampledRecord
  last?: SampledRecord
}

/** stream.bench.ts's case. */
function streamCases(ctx: StoreContext): StoreCaseDefinition<StreamParam>[] {
  const span = Math.min(7 * DAY_MS, ctx.shape.to - ctx.shape.from + STEP_MS)
  const params: StreamParam[] = Array.from({ length: 16 }, () => ({ symbol: randomSymbol(ctx), from: ctx.shape.from, to: ctx.shape.from + span - 1 }))
  return [
    {
      name: `stream ${(span / HOUR_MS).toFixed(0)} h of one symbol, interval 1`,
      params,
      store: async (p) => {
        const summary: StreamSummary = { count: 0 }
        for await (const record of ctx.store.rangeStream(p.symbol, { from: p.from, to: p.to, interval: 1 })) {
          if (summary.count === 0) summary.first = record
          summary.last = record
          summary.count++
        }
        return summary
      },
      count: (answer) => (answer as StreamSummary).count,
      expected: (p) => ticksIn(ctx.shape, p.from, p.to),
      minIterations: 8,
      note: 'records/s = records per call / median time',
    },
  ]
}

/** Runs a family's cases one after the other. */
async function runAll<P>(family: StoreFamily, definitions: readonly StoreCaseDefinition<P>[], budget: Budget): Promise<StoreCaseResult[]> {
  const results: StoreCaseResult[] = []
  for (const definition of definitions) results.push(await runStoreCase(family, definition, budget))
  return results
}

/** Builds one family's cases (all parameters drawn first, in the full run's order) and runs them. */
export function runStoreFamily(family: StoreFamily, ctx: StoreContext): Promise<StoreCaseResult[]> {
  switch (family) {
    case 'latest':
      return runAll(family, latestCases(ctx), ctx.budget)
    case 'several':
      return runAll(family, severalCases(ctx), ctx.budget)
    case 'range':
      return runAll(family, rangeCases(ctx), ctx.budget)
    case 'stream':
      return runAll(family, streamCases(ctx), ctx.budget)
  }
}
