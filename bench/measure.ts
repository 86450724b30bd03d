/**
 * The timing core shared by every case family: contenders run in
 * alternation on the same random parameters (the first to run rotates each
 * iteration), in two loops (PERF-NOTES §6):
 *
 * - warm: calls back to back, the best case for every contender;
 * - spaced: a short sleep before each call, so each one starts from an idle
 *   CPU, the way a service sees sparse traffic.
 *
 * A sample of calls is checked: the store and SQLite must return the same
 * records (deep equality after a JSON round trip, plus key order for the
 * several-tokens object), and the floor must have seen the expected number of
 * entries. Any mismatch fails the case loudly.
 */
import { readFileSync } from 'node:fs'
import { isDeepStrictEqual } from 'node:util'
import { setTimeout as sleep } from 'node:timers/promises'

export type ContenderName = 'store' | 'sqlite' | 'floor'
export const CONTENDERS: readonly ContenderName[] = ['store', 'sqlite', 'floor']

/** Per-operation statistics in microseconds. */
export interface Stats {
  readonly n: number
  readonly median: number
  readonly p90: number
  readonly mean: number
}

/** How long a case runs. */
export interface Budget {
  /** Target wall time of the warm loop, and of the spaced loop (ms). */
  readonly warmMs: number
  readonly spacedMs: number
  readonly minIterations: number
  readonly maxIterations: number
  /** Idle time before each spaced call (ms). */
  readonly spacingMs: number
  /** Calls per contender before timing starts (each checked)... */
  readonly warmup: number
  /** ...and more until every parameter set was used once (caches warm, as in a running service), up to this long (ms). */
  readonly warmupMs: number
}

export const FULL_BUDGET: Budget = { warmMs: 4000, spacedMs: 2500, minIterations: 20, maxIterations: 20_000, spacingMs: 2, warmup: 5, warmupMs: 2000 }
export const QUICK_BUDGET: Budget = { warmMs: 400, spacedMs: 250, minIterations: 5, maxIterations: 2000, spacingMs: 2, warmup: 2, warmupMs: 300 }

/** A SQLite way of answering a case; the fastest correct one is measured. */
export interface Strategy<P> {
  readonly name: string
  /** False when the plan is hopeless for this query shape (e.g. enumerating 86 million buckets). */
  applies?(param: P): boolean
  run(param: P): unknown
}

/**
 * A query case as the store sees it, defined once in its family's
 * `*.bench.ts` file for full runs and store-only runs alike: the same name
 * and, for the same seed and data size, the same parameters drawn in the
 * same order, so the two kinds of run compare case by case.
 */
export interface QueryCase<P> {
  readonly name: string
  /** Random parameter sets; iteration i uses params[i % length]. */
  readonly params: readonly P[]
  store(param: P): Promise<unknown>
  /** Records in an answer (for records/s and the checks). */
  count(answer: unknown): number
  /**
   * Records the generated data holds for this call (one record per symbol
   * every 10 s): what a store-only run, with no SQLite to compare answers
   * with, checks the store's answers against.
   */
  expected(param: P): number
  /** Overrides the budget's minimum iterations (for cases whose calls take seconds). */
  readonly minIterations?: number
  /** The issue's targets for this case (judged in full runs, against SQLite or the floor). */
  readonly targets?: readonly Target[]
  readonly note?: string
}

/** A case of a full run: the store's side and the other contenders. */
export interface CaseDefinition<P> extends QueryCase<P> {
  /** Candidate SQLite plans (layout × query strategy); calibrated, fastest correct one kept. */
  readonly sqlite: readonly Strategy<P>[]
  floor?(param: P): Promise<number>
  /** What the floor must have counted, given the store's answer. */
  readonly floorCheck?: 'equal' | 'at-least'
  /** Whether the answer's key order matters (the several-tokens object). */
  readonly ordered?: boolean
  /**
   * Parameter sets on which, once at setup and untimed, every SQLite plan
   * must return the store's answer and the store the count `expected`
   * gives; any difference fails the case (calibration, by contrast, drops a
   * plan that differs). For cases whose timed parameters rarely reach some
   * paths (e.g. carried buckets).
   */
  readonly setupParams?: readonly P[]
}

/** A target on a time ratio (store time / other time), or a ratio an issue asks to report. */
export interface Target {
  readonly against: 'sqlite' | 'floor'
  /** store/other must be at most this; absent when the issue asks for the ratio but sets no number. */
  readonly maxRatio?: number
  readonly text: string
  /** The issue that asks for it (default 4). */
  readonly issue?: number
}

export interface LoopResult {
  readonly store: Stats
  readonly sqlite: Stats
  readonly floor?: Stats
}

export interface CaseResult {
  readonly family: string
  readonly name: string
  readonly recordsPerOp: number
  readonly warm: LoopResult
  readonly spaced: LoopResult
  readonly sqlitePlan: string
  /** Median µs of each SQLite plan at calibration. */
  readonly calibration: Record<string, number | string>
  readonly checkedCalls: number
  /** Parameter sets checked at setup against every SQLite plan ({@link CaseDefinition.setupParams}). */
  readonly setupChecked?: number
  readonly peakRssMB: number
  readonly peakAnonMB: number
  readonly targets?: readonly Target[]
  readonly note?: string
}

export function stats(samples: readonly number[]): Stats {
  const sorted = [...samples].sort((a, b) => a - b)
  const at = (q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN
  const mean = sorted.reduce((a, b) => a + b, 0) / Math.max(1, sorted.length)
  return { n: sorted.length, median: at(0.5), p90: at(0.9), mean }
}

function nowUs(): number {
  return Number(process.hrtime.bigint()) / 1000
}

let rssPeak = 0
let anonPeak = 0
/** Anonymous resident memory (heap, caches; not mapped files), from /proc on Linux. */
function rssAnon(): number {
  try {
    const match = /RssAnon:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'latin1'))
    return match === null ? 0 : Number(match[1]) * 1024
  } catch {
    return 0
  }
}
/**
 * Samples the resident set size; returns the peak seen since the last reset,
 * in MB. Mapped files (SQLite's mmap, LevelDB's table files) count in RSS,
 * so the anonymous part is tracked too: see {@link anonPeakMB}.
 */
export function sampleRss(): number {
  rssPeak = Math.max(rssPeak, process.memoryUsage.rss())
  anonPeak = Math.max(anonPeak, rssAnon())
  return rssPeak / 1048576
}
/** Peak anonymous resident memory since the last reset, in MB. */
export function anonPeakMB(): number {
  return anonPeak / 1048576
}
export function resetRssPeak(): void {
  rssPeak = 0
  anonPeak = 0
}

/** A JSON round trip: compares records as an HTTP client would see them (no prototypes, no undefined). */
function plain(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value)) as unknown
}

/** Throws when the SQLite answer differs from the store's, showing the first differing entry of arrays. */
export function checkSame(caseName: string, label: string, storeAnswer: unknown, sqliteAnswer: unknown, ordered: boolean): void {
  const a = plain(storeAnswer)
  const b = plain(sqliteAnswer)
  const sameOrder = !ordered || isDeepStrictEqual(Object.keys(a as object), Object.keys(b as object))
  if (!sameOrder || !isDeepStrictEqual(a, b)) {
    const show = (x: unknown): string => JSON.stringify(x).slice(0, 400)
    let where = ''
    let [x, y] = [a, b]
    if (Array.isArray(a) && Array.isArray(b)) {
      const at = a.findIndex((entry, i) => !isDeepStrictEqual(entry, b[i]))
      const index = at === -1 ? a.length : at
      where = ` (${a.length} vs ${b.length} entries; first difference at [${index}])`
      ;[x, y] = [a[index], b[index]]
    }
    throw new Error(`${caseName}: ${label} returned different records than the store${where}\n store: ${show(x)}\n ${label}: ${show(y)}`)
  }
}

function checkFloor(def: CaseDefinition<unknown>, storeAnswer: unknown, floorCount: number): void {
  const expected = def.count(storeAnswer)
  const ok = def.floorCheck === 'at-least' ? floorCount >= expected : floorCount === expected
  if (!ok) throw new Error(`${def.name}: the floor saw ${floorCount} entries, the store answered ${expected} records`)
}

/**
 * Checks, untimed, that on each parameter set every SQLite plan that
 * applies returns exactly the store's answer; throws at the first
 * difference. Returns the number of parameter sets checked.
 */
export async function checkPlansAgree<P>(
  caseName: string,
  store: (param: P) => Promise<unknown>,
  plans: readonly Strategy<P>[],
  params: readonly P[],
  ordered = false,
): Promise<number> {
  for (const param of params) {
    const storeAnswer = await store(param)
    for (const plan of plans) {
      if (plan.applies?.(param) === false) continue
      checkSame(caseName, `SQLite plan ${plan.name} (setup check, parameters ${JSON.stringify(param)})`, storeAnswer, plan.run(param), ordered)
    }
  }
  return params.length
}

/**
 * The setup check of {@link CaseDefinition.setupParams}: on each parameter
 * set the store's answer holds `expected` entries, and every SQLite plan
 * returns it exactly ({@link checkPlansAgree}). Returns the number of
 * parameter sets checked.
 */
async function checkAtSetup<P>(def: CaseDefinition<P>, params: readonly P[]): Promise<number> {
  const counted = async (param: P): Promise<unknown> => {
    const answer = await def.store(param)
    const count = def.count(answer)
    if (count !== def.expected(param)) {
      throw new Error(`${def.name}: setup check: the store answered ${count} entries, the data implies ${def.expected(param)} (parameters ${JSON.stringify(param)})`)
    }
    return answer
  }
  return checkPlansAgree(def.name, counted, def.sqlite, params, def.ordered ?? false)
}

/** Times one call (µs), with its answer. */
export async function timeCall(run: () => unknown): Promise<[number, unknown]> {
  const start = nowUs()
  const answer = await run()
  return [nowUs() - start, answer]
}

/**
 * Picks the fastest SQLite plan whose answers equal the store's. Plans run
 * round-robin on the same parameter sets, so a burst of noise from another
 * process hits them all; a plan over 4× the best median after three rounds
 * is dropped (it cannot win, and some take a second per call).
 */
async function calibrate<P>(def: CaseDefinition<P>, budget: Budget): Promise<{ chosen: Strategy<P>; table: Record<string, number | string> }> {
  const table: Record<string, number | string> = {}
  const rounds = Math.max(3, budget.warmup + 2)
  const live = new Map<Strategy<P>, number[]>()
  for (const strategy of def.sqlite) {
    table[strategy.name] = 'not tried'
    if (strategy.applies?.(def.params[0] as P) !== false) live.set(strategy, [])
  }
  for (let round = 0; round < rounds && live.size > 0; round++) {
    const param = def.params[round % def.params.length] as P
    const storeAnswer = await def.store(param)
    for (const [strategy, times] of live) {
      try {
        const [time, answer] = await timeCall(() => strategy.run(param))
        checkSame(def.name, `SQLite plan ${strategy.name}`, storeAnswer, answer, def.ordered ?? false)
        times.push(time)
      } catch (err) {
        table[strategy.name] = `failed: ${(err as Error).message.split('\n')[0]}`
        live.delete(strategy)
      }
    }
    if (round >= 2) {
      const best = Math.min(...[...live.values()].map((times) => stats(times).median))
      for (const [strategy, times] of live) {
        if (stats(times).median > 4 * best) {
          table[strategy.name] = Math.round(stats(times).median)
          live.delete(strategy)
        }
      }
    }
  }
  let best: { strategy: Strategy<P>; median: number } | undefined
  for (const [strategy, times] of live) {
    const median = stats(times).median
    table[strategy.name] = Math.round(median)
    if (best === undefined || median < best.median) best = { strategy, median }
  }
  if (best === undefined) throw new Error(`${def.name}: no SQLite plan returned the store's records: ${JSON.stringify(table)}`)
  return { chosen: best.strategy, table }
}

/** One iteration of a case's loops, as {@link runLoops} hands it over. */
export interface Iteration<P, T> {
  /** The parameter set: iteration i uses params[i % length]. */
  readonly param: P
  /** The iteration's number in the warm-up or in its loop. */
  readonly index: number
  /** Idle time before each call (ms): 0 but in the spaced loop. */
  readonly spacingMs: number
  /** Where the call times go; absent in the warm-up. */
  readonly times: T | undefined
  /** Whether to check the answers: every call of the warm-up, then the first 8 of a loop and one in 16 after that. */
  readonly check: boolean
}

/**
 * The loops of a case, whoever its contenders (a full run's and a
 * store-only run's alike): the warm-up (`budget.warmup` iterations, then
 * more until every parameter set was used once, up to `warmupMs`), the warm
 * loop and the spaced loop, each of at least the minimum iterations and up
 * to its time. `iterate` makes one iteration's calls and returns the
 * records in the store's answer. Samples the resident set every 8
 * iterations.
 */
export async function runLoops<P, T>(
  def: Pick<QueryCase<P>, 'params' | 'minIterations'>,
  budget: Budget,
  newTimes: () => T,
  iterate: (iteration: Iteration<P, T>) => Promise<number>,
): Promise<{ readonly warm: T; readonly spaced: T; readonly recordsPerOp: number }> {
  let recordsSeen = 0
  let answersSeen = 0
  const step = async (index: number, spacingMs: number, times: T | undefined): Promise<void> => {
    const param = def.params[index % def.params.length] as P
    recordsSeen += await iterate({ param, index, spacingMs, times, check: times === undefined || index < 8 || index % 16 === 0 })
    answersSeen++
    if (index % 8 === 0) sampleRss()
  }

  const warmupStart = Date.now()
  for (let i = 0; i < budget.warmup || (i < def.params.length && Date.now() - warmupStart < budget.warmupMs); i++) await step(i, 0, undefined)

  const minimum = Math.min(def.minIterations ?? budget.minIterations, budget.minIterations)
  const loop = async (ms: number, spacingMs: number): Promise<T> => {
    const times = newTimes()
    const start = Date.now()
    let i = 0
    while (i < budget.maxIterations && (i < minimum || Date.now() - start < ms)) await step(i++, spacingMs, times)
    return times
  }
  const warm = await loop(budget.warmMs, 0)
  const spaced = await loop(budget.spacedMs, budget.spacingMs)
  return { warm, spaced, recordsPerOp: recordsSeen / Math.max(1, answersSeen) }
}

/** Runs a family's cases one after the other, each made a full run's case by `definition` (the other contenders added). */
export async function runCases<C, P>(family: string, cases: readonly C[], budget: Budget, definition: (base: C) => CaseDefinition<P>): Promise<CaseResult[]> {
  const results: CaseResult[] = []
  for (const base of cases) results.push(await runCase(family, definition(base), budget))
  return results
}

/**
 * Runs one case: calibration, then {@link runLoops} with the contenders
 * taking turns at going first.
 */
export async function runCase<P>(family: string, def: CaseDefinition<P>, budget: Budget): Promise<CaseResult> {
  resetRssPeak()
  sampleRss()
  const setupChecked = def.setupParams === undefined ? undefined : await checkAtSetup(def, def.setupParams)
  const { chosen, table } = await calibrate(def, budget)
  const contenders: { name: ContenderName; run: (param: P) => unknown }[] = [
    { name: 'store', run: (param) => def.store(param) },
    { name: 'sqlite', run: (param) => chosen.run(param) },
  ]
  const floor = def.floor
  if (floor !== undefined) contenders.push({ name: 'floor', run: (param) => floor.call(def, param) })

  let checked = 0
  const newTimes = (): Map<ContenderName, number[]> => new Map(contenders.map((c) => [c.name, []]))
  const loops = await runLoops(def, budget, newTimes, async ({ param, index, spacingMs, times, check }) => {
    const answers = new Map<ContenderName, unknown>()
    for (let k = 0; k < contenders.length; k++) {
      const contender = contenders[(index + k) % contenders.length] as (typeof contenders)[number]
      if (spacingMs > 0) await sleep(spacingMs)
      const [time, answer] = await timeCall(() => contender.run(param))
      times?.get(contender.name)?.push(time)
      answers.set(contender.name, answer)
    }
    const storeAnswer = answers.get('store')
    if (check) {
      checkSame(def.name, 'SQLite', storeAnswer, answers.get('sqlite'), def.ordered ?? false)
      if (floor !== undefined) checkFloor(def as CaseDefinition<unknown>, storeAnswer, answers.get('floor') as number)
      checked++
    }
    return def.count(storeAnswer)
  })
  const loopResult = (times: Map<ContenderName, number[]>): LoopResult => {
    const of = (name: ContenderName): Stats => stats(times.get(name) ?? [])
    return { store: of('store'), sqlite: of('sqlite'), ...(floor === undefined ? {} : { floor: of('floor') }) }
  }
  return {
    family,
    name: def.name,
    recordsPerOp: loops.recordsPerOp,
    warm: loopResult(loops.warm),
    spaced: loopResult(loops.spaced),
    sqlitePlan: chosen.name,
    calibration: table,
    checkedCalls: checked,
    ...(setupChecked === undefined ? {} : { setupChecked }),
    peakRssMB: Math.round(sampleRss()),
    peakAnonMB: Math.round(anonPeakMB()),
    ...(def.targets === undefined ? {} : { targets: def.targets }),
    ...(def.note === undefined ? {} : { note: def.note }),
  }
}
