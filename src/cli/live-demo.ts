import { DEMO_TOKENS, type DemoRecord, type DemoToken } from '../demo/demo-data.js'
import { DemoWalk } from '../demo/demo-walk.js'
import type { PriceStore } from '../store/price-store.js'
import type { PriceRecord } from '../types.js'
import type { CliIo } from './io.js'
import { readDemoMark } from './demo-marker.js'
import { Progress, formatCount } from './progress.js'

/** How often the live demo commits new prices (ms). */
export const LIVE_DEMO_INTERVAL_MS = 1000
/** Time between two moments of the catch-up, as in the demo data set (ms). */
const CATCH_UP_STEP_MS = 10_000
/** Records per batch of the catch-up. */
const CATCH_UP_BATCH = 10_000

/** What the live demo needs of a store: `PriceStore` has it. */
export type LiveDemoStore = Pick<PriceStore, 'putMany' | 'several' | 'provider'>

/** The live demo's clock and timer: the real ones in `serve`, ones a test drives by hand. */
export interface LiveDemoClock {
  now(): number
  /** Runs `task` once after `ms`; the function returned cancels it. */
  schedule(task: () => void, ms: number): () => void
}

/** The real clock; its timers do not keep the process alive on their own. */
export const REAL_CLOCK: LiveDemoClock = {
  now: () => Date.now(),
  schedule(task, ms) {
    const timer = setTimeout(task, ms)
    timer.unref()
    return () => clearTimeout(timer)
  },
}

/** Options of {@link LiveDemo.start}. */
export interface LiveDemoOptions {
  /** Same seed, same walk from the same prices. Give each run its own: ids come from it, and a repeated id replaces a record. */
  readonly seed: string
  /** Time between two commits (ms, default {@link LIVE_DEMO_INTERVAL_MS}). */
  readonly intervalMs?: number
  /** The tokens to move (default the demo's). */
  readonly tokens?: readonly DemoToken[]
  readonly clock?: LiveDemoClock
  /** Told the error that stopped the writer (a write the store refused); the writer writes nothing more. */
  readonly onError?: (err: unknown) => void
}

/**
 * Keeps a demo store moving: every `intervalMs` it commits one batch with a
 * new price of each demo token, timestamped now, going on by a seeded random
 * walk from each token's newest stored value. It writes through the store's
 * `putMany` like any client, so live streams see each commit. The next
 * commit is scheduled only once the last one is written: commits never
 * overlap, and a slow disk slows the demo instead of queueing writes.
 */
export class LiveDemo {
  readonly #store: LiveDemoStore
  readonly #walk: DemoWalk
  readonly #clock: LiveDemoClock
  readonly #intervalMs: number
  readonly #onError: (err: unknown) => void
  #last: number
  #cancel: (() => void) | undefined
  #writing: Promise<void> | undefined
  #stopped = false
  #commits = 0

  private constructor(store: LiveDemoStore, walk: DemoWalk, last: number, options: LiveDemoOptions) {
    this.#store = store
    this.#walk = walk
    this.#last = last
    this.#clock = options.clock ?? REAL_CLOCK
    this.#intervalMs = options.intervalMs ?? LIVE_DEMO_INTERVAL_MS
    this.#onError = options.onError ?? (() => {})
  }

  /** Reads where each token's price stands in `store` and schedules the first commit `intervalMs` from now. */
  static async start(store: LiveDemoStore, options: LiveDemoOptions): Promise<LiveDemo> {
    const tokens = options.tokens ?? DEMO_TOKENS
    const { start, newest } = await whereTheyStand(store, tokens)
    const intervalMs = options.intervalMs ?? LIVE_DEMO_INTERVAL_MS
    const walk = new DemoWalk({ providerId: store.provider.id, seed: options.seed, tokens, stepMs: intervalMs, start })
    const demo = new LiveDemo(store, walk, newest ?? -1, options)
    demo.#schedule()
    return demo
  }

  /** Commits written so far. */
  get commits(): number {
    return this.#commits
  }

  /** Whether it still writes (not stopped, by {@link stop} or by an error). */
  get running(): boolean {
    return !this.#stopped
  }

  /** Resolves once the commit being written (if any) is done. */
  async idle(): Promise<void> {
    await this.#writing
  }

  /**
   * Stops writing: cancels the next commit and waits for the one being
   * written, so nothing is written once this resolves (the store may then
   * be closed). Never rejects.
   */
  async stop(): Promise<void> {
    this.#stopped = true
    this.#cancel?.()
    this.#cancel = undefined
    await this.#writing
  }

  #schedule(): void {
    if (this.#stopped) return
    this.#cancel = this.#clock.schedule(() => {
      this.#cancel = undefined
      this.#writing = this.#commit().then(
        () => this.#schedule(),
        (err: unknown) => {
          this.#stopped = true
          this.#onError(err)
        },
      )
    }, this.#intervalMs)
  }

  /** One commit: every token's next price, at now (or just after the last commit, should the clock step back). */
  async #commit(): Promise<void> {
    if (this.#stopped) return
    const timestamp = Math.max(this.#clock.now(), this.#last + 1)
    this.#last = timestamp
    await this.#store.putMany(this.#walk.moment(timestamp))
    this.#commits++
  }
}

/** Options of {@link catchUpDemo}. */
export interface CatchUpOptions {
  readonly now: number
  readonly seed: string
  /** The longest gap filled (ms): a longer one is filled only over its last `maxMs`. */
  readonly maxMs: number
  readonly tokens?: readonly DemoToken[]
}

/**
 * Fills the time between a demo store's newest record and `now` with the
 * demo's walk (a moment every 10 s, going on from each token's newest
 * value), over at most the last `maxMs`, so a demo written days ago shows
 * its recent hours rather than a gap up to the live prices. Returns the
 * records written (0 when the store is already up to date).
 */
export async function catchUpDemo(store: LiveDemoStore, io: CliIo, options: CatchUpOptions): Promise<number> {
  const tokens = options.tokens ?? DEMO_TOKENS
  const { start, newest } = await whereTheyStand(store, tokens)
  if (newest === undefined) return 0
  const from = Math.max(newest + CATCH_UP_STEP_MS, options.now - options.maxMs)
  const moments = Math.max(0, Math.ceil((options.now - from) / CATCH_UP_STEP_MS))
  if (moments === 0) return 0
  io.stderr.write(`the demo data ends at ${new Date(newest).toISOString()}: continuing it up to now (${formatCount(moments * tokens.length)} records)...\n`)
  const walk = new DemoWalk({ providerId: store.provider.id, seed: options.seed, tokens, stepMs: CATCH_UP_STEP_MS, start })
  const progress = new Progress(io, 'continuing the demo data', { total: moments * tokens.length })
  let batch: DemoRecord[] = []
  for (let moment = 0; moment < moments; moment++) {
    // Landing a little after each 10 s mark, as the demo set's moments do, and never at or past now.
    const timestamp = Math.min(options.now - 1, from + moment * CATCH_UP_STEP_MS + Math.floor(walk.nextFraction() * 1000))
    batch.push(...walk.moment(timestamp))
    if (batch.length >= CATCH_UP_BATCH) {
      progress.add(await store.putMany(batch))
      batch = []
    }
  }
  if (batch.length > 0) progress.add(await store.putMany(batch))
  return progress.finish().count
}

/** Each token's newest stored value, by symbol, and the newest of their timestamps (`undefined` when none has a record). */
async function whereTheyStand(store: LiveDemoStore, tokens: readonly DemoToken[]): Promise<{ start: Map<string, number>; newest: number | undefined }> {
  const latest: Record<string, PriceRecord> = await store.several(tokens.map((token) => token.symbol))
  const start = new Map<string, number>()
  let newest: number | undefined
  for (const record of Object.values(latest)) {
    start.set(record.symbol, record.value)
    newest = Math.max(newest ?? record.timestamp, record.timestamp)
  }
  return { start, newest }
}

/** The demo's length when its mark does not say (the default of the demo data set: 2 days). */
const DEFAULT_DEMO_MS = 2 * 86_400_000
/**
 * The longest catch-up (ms): a day, so the chart's 1-day window is full
 * after about 10 s on the first start (the standard demo set ends in 2024).
 */
const MAX_CATCH_UP_MS = 86_400_000

/**
 * `serve --live-demo`: on a store holding only the demo data set (its
 * mark says so), continues the demo up to now ({@link catchUpDemo}, over at
 * most the demo's own length and a day) and starts the {@link LiveDemo}.
 * The demo set itself stays as written (it ends in 2024, where the
 * documentation's examples query it). On any other
 * store it says why it leaves it alone and returns `undefined`: made-up
 * prices never go into someone's records.
 */
export async function startLiveDemo(store: LiveDemoStore, location: string, io: CliIo, clock: LiveDemoClock = REAL_CLOCK): Promise<LiveDemo | undefined> {
  const mark = await readDemoMark(location)
  if (mark === undefined) {
    io.stderr.write(
      `no live demo: the database at ${location} is not the demo data set (it holds records of its own, or none), and the live demo ` +
        'writes only into that (move this one away, and --demo-if-empty writes a new demo)\n',
    )
    return undefined
  }
  const now = clock.now()
  // A seed of its own per start: the walk makes the records' ids, and a repeated id would replace an earlier record.
  await catchUpDemo(store, io, { now, seed: `price-store-demo:catch-up:${now}`, maxMs: Math.min(mark.recipe.durationMs ?? DEFAULT_DEMO_MS, MAX_CATCH_UP_MS) })
  return LiveDemo.start(store, {
    seed: `price-store-demo:live:${now}`,
    clock,
    onError: (err) => io.stderr.write(`the live demo stopped: ${err instanceof Error ? err.message : String(err)}\n`),
  })
}
