/**
 * Crash safety (SPEC §5, issue 5): a child process writes deterministic
 * batches into a classic-level store and prints `ACK n` after each
 * `putMany` resolves; the test kills it with SIGKILL at seeded random
 * moments (before it has opened, between batches, in the middle of large
 * ones), reopens the store at once and checks, against a naive model of the
 * write history:
 *
 * - every acknowledged batch is fully present, with its exact values, and
 *   every record once (a record in both a chunk and the log must not come
 *   back twice);
 * - the batch in flight at the kill is present entirely or not at all;
 * - the symbol index, the chunks and their heads agree with the records
 *   (every query form, ranges at heads and scanned intervals included,
 *   equals the model);
 * - the caches agree with the disk: the same queries answered with every
 *   cache off, tiny and default give the same answers, also after new writes;
 * - the store accepts new writes, and the next crash cycle builds on them.
 *
 * The sealing trials make the writer seal constantly (`openBytes` 0, or
 * batches spreading over three hours each, so every batch closes hours) and
 * kill it at random moments after an acknowledgement, which is when seals
 * run, or right after it opens, when it seals the hours a crash left open.
 *
 * Set RELIABILITY_SEED to replay another schedule; a failure names the seed.
 *
 * `npm test` runs every trial for two kill cycles; the slow set (`npm run
 * test:slow`, run by CI too) runs four, and there checks that the sixteen
 * kills of the sealing trials left an hour half sealed at least once.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ClassicLevel } from 'classic-level'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { PriceStore } from '../../src/index.js'
import type { PriceRecord, PriceStoreOptions } from '../../src/index.js'
import { readHeadsPeriod, readLogKey } from '../../src/keys/key-layout.js'
import { BATCH_SPAN, CRASH_PROVIDER, CRASH_SYMBOLS, CRASH_T0, batchRecords, keyOf, prng } from './crash-plan.js'
import type { CrashLayout, CrashRecord } from './crash-plan.js'
import { bundleChild, lastAckAfterKill, startChild } from './child-process.js'
import type { ChildBundle } from './child-process.js'
import { FULL_RUNS, runs } from '../support/full-runs.js'

const SEED = Number(process.env.RELIABILITY_SEED ?? 20_261_122)
/** Kill cycles per trial: each builds on the store the kills before it left. */
const CYCLES_PER_TRIAL = runs(2, 4)
const MAX = Number.MAX_SAFE_INTEGER
/** Large enough that a whole symbol is one latest query and one range answer. */
const LIMITS = { maxLimit: 1_000_000, maxRangePoints: 1_000_000 }
/** Indexed at each level (1 min, 10 min, 1 h, 1 day, and a multiple of 1 min), and scanned (90 s, 1 ms). */
const INTERVALS = [60_000, 600_000, 3_600_000, 86_400_000, 7 * 60_000, 90_000, 1]

let bundle: ChildBundle
const dirs: string[] = []
/** Stores a failed assertion may have left open. */
const openStores: PriceStore[] = []

/** How the checking stores keep memory: every cache off, tiny ones, or the defaults (with the trial's openBytes). */
const MEMORY = {
  off: { cache: { recordsPerSymbol: 0, headBytes: 0, chunkBytes: 0 } },
  tiny: { cache: { recordsPerSymbol: 3, headBytes: 4_000, chunkBytes: 6_000 }, openBytes: 2_048 },
  default: {},
} as const satisfies Record<string, Partial<PriceStoreOptions>>

async function openStore(dir: string, memory: Partial<PriceStoreOptions>): Promise<PriceStore> {
  const store = await PriceStore.open(dir, { provider: CRASH_PROVIDER, limits: LIMITS, ...memory })
  openStores.push(store)
  return store
}

/** Hours holding both log entries and a chunk in what a kill left on disk: a seal under way, or late records not merged yet. */
async function halfSealedHours(dir: string): Promise<number> {
  const db = new ClassicLevel(dir)
  try {
    const bytes = (name: string) => db.sublevel<Uint8Array, Uint8Array>(name, { keyEncoding: 'view', valueEncoding: 'view' })
    const logged = new Set((await bytes('l').keys().all()).map((key) => readLogKey(key).period))
    const sealed = new Set((await bytes('h').keys().all()).map(readHeadsPeriod))
    return [...logged].filter((period) => sealed.has(period)).length
  } finally {
    await db.close()
  }
}

afterEach(async () => {
  for (const store of openStores.splice(0)) await store.close()
})

beforeAll(async () => {
  bundle = await bundleChild('./crash-writer.ts')
})

afterAll(async () => {
  await bundle?.cleanup()
  for (const dir of dirs) await rm(dir, { recursive: true, force: true })
})

// ---------------------------------------------------------------------------
// The naive model: a map from key to the last record written under it.

type State = Map<string, CrashRecord>

function applyBatch(state: State, n: number, layout: CrashLayout): void {
  for (const record of batchRecords(n, layout)) state.set(keyOf(record), record)
}

const utf8Order = (a: string, b: string): number => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'))
const recordOrder = (a: CrashRecord, b: CrashRecord): number => a.timestamp - b.timestamp || utf8Order(a.id, b.id)

/** The record as every query must return it: stored fields in order, the extra `batch`, then providerPublicKey. */
function returned(record: CrashRecord, minutes = false): string {
  const out = {
    id: record.id, symbol: record.symbol, provider: CRASH_PROVIDER.id, value: record.value, signature: record.signature,
    permawebTx: record.permawebTx, version: record.version, source: record.source, timestamp: record.timestamp,
    batch: record.batch, providerPublicKey: CRASH_PROVIDER.publicKey,
    ...(minutes ? { minutes: Math.floor(record.timestamp / 60_000) % 60 } : {}),
  }
  return JSON.stringify(out)
}

/** The model indexed for queries: each symbol's records, oldest first. */
interface Model {
  readonly bySymbol: ReadonlyMap<string, readonly CrashRecord[]>
}

function indexModel(state: State): Model {
  const bySymbol = new Map<string, CrashRecord[]>()
  for (const record of state.values()) {
    let list = bySymbol.get(record.symbol)
    if (list === undefined) bySymbol.set(record.symbol, (list = []))
    list.push(record)
  }
  for (const list of bySymbol.values()) list.sort(recordOrder)
  return { bySymbol }
}

function modelSymbols(model: Model): string[] {
  return [...model.bySymbol.keys()].sort(utf8Order)
}

function modelLatest(model: Model, symbol: string, o: { limit: number; offset?: number; from?: number; to?: number }): string[] {
  const out: string[] = []
  const records = model.bySymbol.get(symbol) ?? []
  let skip = o.offset ?? 0
  for (let i = records.length - 1; i >= 0 && out.length < o.limit; i--) {
    const r = records[i] as CrashRecord
    if ((o.from !== undefined && r.timestamp < o.from) || (o.to !== undefined && r.timestamp > o.to)) continue
    if (skip > 0) skip--
    else out.push(returned(r))
  }
  return out
}

function modelRange(model: Model, symbol: string, from: number, to: number, interval: number): string[] {
  const byBucket = new Map<number, CrashRecord>()
  for (const record of model.bySymbol.get(symbol) ?? []) {
    if (record.timestamp < from || record.timestamp > to) continue
    // Ascending order: the last record seen in a bucket is its latest.
    byBucket.set(Math.floor(record.timestamp / interval), record)
  }
  return [...byBucket.entries()].sort((a, b) => a[0] - b[0]).map(([, record]) => returned(record, true))
}

function modelSeveral(model: Model, symbols: readonly string[] | 'all', window: { from?: number; to?: number }): [string, string][] {
  const names = symbols === 'all' ? modelSymbols(model) : symbols
  const out: [string, string][] = []
  for (const symbol of names) {
    const [latest] = modelLatest(model, symbol, { limit: 1, ...window })
    if (latest !== undefined) out.push([symbol, latest])
  }
  return out
}

// ---------------------------------------------------------------------------
// Reading the store back.

const json = (records: readonly PriceRecord[]): string[] => records.map((record) => JSON.stringify(record))

/** Every record in the store, by key, as returned JSON; a key returned twice is kept as a duplicate. */
async function dump(store: PriceStore): Promise<Map<string, string>> {
  const out = new Map<string, string>()
  for (const symbol of await store.symbols()) {
    for (const record of await store.latest(symbol, { limit: LIMITS.maxLimit })) {
      const key = keyOf(record)
      const held = out.get(key)
      out.set(key, held === undefined ? JSON.stringify(record) : `DUPLICATE ${held} AND ${JSON.stringify(record)}`)
    }
  }
  return out
}

function asJson(state: State): Map<string, string> {
  return new Map([...state].map(([key, record]) => [key, returned(record)]))
}

function differences(actual: Map<string, string>, expected: Map<string, string>): string[] {
  const out: string[] = []
  for (const [key, value] of expected) {
    const got = actual.get(key)
    if (got !== value) out.push(`${JSON.stringify(key)}: expected ${value}, got ${got ?? 'nothing'}`)
  }
  for (const key of actual.keys()) if (!expected.has(key)) out.push(`${JSON.stringify(key)}: unexpected ${actual.get(key)}`)
  return out
}

/**
 * A fixed, seeded list of queries with their model answers: latest with
 * limits, offsets and windows; several (named, all, as of a time); ranges
 * at indexed and scanned intervals, over everything and over odd windows.
 */
function queriesFor(state: State, random: () => number): { name: string; run: (s: PriceStore) => Promise<unknown>; expected: unknown }[] {
  const model = indexModel(state)
  let span = BATCH_SPAN
  for (const record of state.values()) span = Math.max(span, record.timestamp - CRASH_T0 + 1)
  const at = (): number => CRASH_T0 + Math.floor(random() * span)
  const out: { name: string; run: (s: PriceStore) => Promise<unknown>; expected: unknown }[] = []
  for (const symbol of [...CRASH_SYMBOLS, 'NONE']) {
    for (const o of [{ limit: 1 }, { limit: 3, offset: 2 }, { limit: 50 }, { limit: 5, to: at() }, { limit: 4, from: at() }]) {
      out.push({ name: `latest ${symbol} ${JSON.stringify(o)}`, run: async (s) => json(await s.latest(symbol, o)), expected: modelLatest(model, symbol, o) })
    }
    const a = at()
    const b = at()
    const windows: [number, number][] = [[0, MAX], [Math.min(a, b), Math.max(a, b)]]
    for (const [from, to] of windows) {
      for (const interval of INTERVALS) {
        // Every record once is enough: sampling each millisecond of everything is the costliest query.
        if (interval === 1 && to === MAX) continue
        out.push({
          name: `range ${symbol} ${from}..${to} every ${interval}`,
          run: async (s) => json(await s.range(symbol, { from, to, interval })),
          expected: modelRange(model, symbol, from, to, interval),
        })
      }
    }
    // The stream reads one view throughout: every record once, and the 10-minute heads of a window.
    for (const [from, to, interval] of [[0, MAX, 1], [Math.min(a, b), Math.max(a, b), 600_000]] as const) {
      out.push({
        name: `rangeStream ${symbol} ${from}..${to} every ${interval}`,
        run: async (s) => {
          const records: PriceRecord[] = []
          for await (const record of s.rangeStream(symbol, { from, to, interval })) records.push(record)
          return json(records)
        },
        expected: modelRange(model, symbol, from, to, interval),
      })
    }
    // The HTTP-facing path, at the two intervals named by the issue.
    for (const interval of [60_000, 3_600_000]) {
      const params = new URLSearchParams({ symbol, interval: String(interval), fromTimestamp: '0', toTimestamp: String(MAX) })
      out.push({ name: `query ${params}`, run: async (s) => json((await s.query(params)) as PriceRecord[]), expected: modelRange(model, symbol, 0, MAX, interval) })
    }
  }
  const to = at()
  for (const [names, window] of [['all', {}], [[...CRASH_SYMBOLS].reverse(), {}], ['all', { to }], [['ETH', 'NONE', 'BTC'], { to }]] as const) {
    out.push({
      name: `several ${String(names)} ${JSON.stringify(window)}`,
      run: async (s) => Object.entries(await s.several(names === 'all' ? undefined : names, window)).map(([k, v]) => [k, JSON.stringify(v)]),
      expected: modelSeveral(model, names, window),
    })
  }
  out.push({ name: 'symbols', run: (s) => s.symbols(), expected: modelSymbols(model) })
  return out
}

async function answers(store: PriceStore, queries: ReturnType<typeof queriesFor>): Promise<unknown[]> {
  const out: unknown[] = []
  for (const query of queries) out.push(await query.run(store))
  return out
}

function expectAnswers(actual: unknown[], queries: ReturnType<typeof queriesFor>, context: string): void {
  queries.forEach((query, i) => {
    expect(actual[i], `${context}: ${query.name}`).toEqual(query.expected)
  })
}

// ---------------------------------------------------------------------------

interface Kill {
  readonly lastAck: number | undefined
  readonly how: string
}

/** How a trial's writer runs. */
interface Trial {
  readonly sync: boolean
  /** The writer's hot-tail size. */
  readonly perSymbol: number
  /** The writer's openBytes (undefined: the default). */
  readonly openBytes: number | undefined
  readonly layout: CrashLayout
  /** Kill more often just after an acknowledgement or just after opening, when seals run. */
  readonly sealing: boolean
}

const sleep = (ms: number): Promise<unknown> => new Promise((resolve) => setTimeout(resolve, ms))

/** Runs the writer from batch `first` and kills it at a seeded moment; resolves once it is gone. */
async function writeUntilKilled(dir: string, first: number, random: () => number, trial: Trial): Promise<Kill> {
  const args = [dir, String(first), trial.sync ? '1' : '0', String(trial.perSymbol), String(trial.openBytes ?? 'default'), trial.layout]
  const running = startChild(bundle, args)
  let how: string
  try {
    const roll = random()
    if (roll < 0.15) {
      // Before or while it opens the store.
      const delay = Math.floor(random() * 120)
      how = `${delay} ms after spawn`
      await sleep(delay)
    } else if (trial.sealing && roll < 0.3) {
      // Just after opening: it replays the log and seals the hours the last kill left open.
      await running.waitForLine(/^READY$/)
      const delay = Math.floor(random() * 25)
      how = `${delay} ms after READY`
      if (delay > 0) await sleep(delay)
    } else if (roll < (trial.sealing ? 0.45 : 0.575)) {
      // While a batch is being written: a large one is validated, encoded and committed over several ms.
      const target = first + Math.floor(random() * 8)
      await running.waitForLine(new RegExp(`^BEGIN ${target}$`))
      const delay = Math.floor(random() * 6)
      how = `${delay} ms after BEGIN ${target} (${batchRecords(target, trial.layout).length} records)`
      if (delay > 0) await sleep(delay)
    } else {
      // Between batches, where the seals a batch makes due run, or early in the next one.
      await running.waitForLine(/^READY$/)
      const acks = Math.floor(random() * 10)
      if (acks > 0) await running.waitForLine(new RegExp(`^ACK ${first + acks - 1}$`))
      const delay = random() < 0.4 ? 0 : Math.floor(random() * (trial.sealing ? 25 : 15))
      how = `${delay} ms after ${acks === 0 ? 'READY' : `ACK ${first + acks - 1}`}`
      if (delay > 0) await sleep(delay)
    }
  } finally {
    running.kill()
  }
  return { lastAck: await lastAckAfterKill(running, first), how }
}

const TRIALS: readonly Trial[] = [
  { sync: false, perSymbol: 128, openBytes: undefined, layout: 'minutes', sealing: false },
  { sync: false, perSymbol: 4, openBytes: undefined, layout: 'minutes', sealing: false },
  { sync: false, perSymbol: 0, openBytes: undefined, layout: 'minutes', sealing: false },
  { sync: true, perSymbol: 128, openBytes: undefined, layout: 'minutes', sealing: false },
  // Sealing all the time: every hour after every batch (an hour is merged again six times), or batches over three hours each.
  { sync: false, perSymbol: 128, openBytes: 0, layout: 'minutes', sealing: true },
  { sync: false, perSymbol: 4, openBytes: 0, layout: 'hours', sealing: true },
  { sync: false, perSymbol: 0, openBytes: undefined, layout: 'hours', sealing: true },
  { sync: true, perSymbol: 128, openBytes: 4_096, layout: 'hours', sealing: true },
]

/** Kills that left an hour with both log entries and a chunk on disk, over the sealing trials. */
const halfSealed = { kills: 0, found: 0 }

describe('crash safety: SIGKILL during ingest', () => {
  TRIALS.forEach((trial, index) => {
    const { sync, perSymbol, openBytes, layout } = trial
    const name = `trial ${index} (seed ${SEED}, sync: ${sync}, writer cache ${perSymbol}, openBytes ${openBytes ?? 'default'}, ${layout})`
    it(`${name}: acknowledged batches survive once each, none is partial, chunks, heads and caches agree`, async () => {
      const random = prng(SEED + index * 1_000_003)
      const dir = await mkdtemp(join(tmpdir(), 'price-store-crash-'))
      dirs.push(dir)
      const state: State = new Map()
      let committed = 0
      const checked = { ...MEMORY.default, ...(openBytes === undefined ? {} : { openBytes }) }
      for (let cycle = 0; cycle < CYCLES_PER_TRIAL; cycle++) {
        const first = committed + 1
        const kill = await writeUntilKilled(dir, first, random, trial)
        const context = `seed ${SEED} trial ${index} cycle ${cycle}, killed ${kill.how}`
        const lastAck = kill.lastAck ?? committed
        if (trial.sealing) {
          halfSealed.kills++
          if ((await halfSealedHours(dir)) > 0) halfSealed.found++
        }

        // Reopen at once: the dead writer's lock is gone with it.
        const disk = await openStore(dir, MEMORY.off)
        const stored = await dump(disk)

        // Every acknowledged batch, then the one in flight: all of it or none.
        for (let n = first; n <= lastAck; n++) applyBatch(state, n, layout)
        const withoutInFlight = differences(stored, asJson(state))
        if (withoutInFlight.length === 0) {
          committed = lastAck
        } else {
          const inFlight = new Map(state)
          applyBatch(inFlight, lastAck + 1, layout)
          const withInFlight = differences(stored, asJson(inFlight))
          const written = batchRecords(lastAck + 1, layout)
          const present = written.filter((record) => stored.get(keyOf(record)) === returned(record)).length
          expect(withInFlight, `${context}: the store matches neither the acknowledged batches ${first}..${lastAck} ` +
            `nor those plus batch ${lastAck + 1} (${present} of its ${written.length} records present). ` +
            `Without it: ${withoutInFlight.slice(0, 3).join('; ')}`).toEqual([])
          applyBatch(state, lastAck + 1, layout)
          committed = lastAck + 1
        }

        // Chunks, heads and caches: the same seeded queries on the disk alone, tiny caches and the default ones.
        const queries = queriesFor(state, random)
        const fromDisk = await answers(disk, queries)
        expectAnswers(fromDisk, queries, `${context}, caches off`)
        await disk.close()

        const tiny = await openStore(dir, MEMORY.tiny)
        const fromTiny = await answers(tiny, queries)
        expect(fromTiny, `${context}: tiny caches answer as the disk`).toEqual(fromDisk)
        await tiny.close()

        // The default caches, loaded by reading, then new writes merged into them.
        const cached = await openStore(dir, checked)
        expect(await answers(cached, queries), `${context}: the default caches answer as the disk`).toEqual(fromDisk)
        committed++
        const next = batchRecords(committed, layout)
        await expect(cached.putMany(next)).resolves.toBe(next.length)
        applyBatch(state, committed, layout)
        const after = queriesFor(state, random)
        expectAnswers(await answers(cached, after), after, `${context}, default caches after a new write`)
        expect(differences(await dump(cached), asJson(state)), `${context}: after a new write`).toEqual([])
        await cached.close()
      }

      // After the last cycle: a cold reopen still agrees.
      const final = await openStore(dir, MEMORY.off)
      expect(differences(await dump(final), asJson(state))).toEqual([])
      const queries = queriesFor(state, random)
      expectAnswers(await answers(final, queries), queries, `seed ${SEED} trial ${index}, final reopen`)
    })
  })

  // At the full count only: it is sized for the sixteen kills of four cycles, not the eight of two.
  it.runIf(FULL_RUNS)('the sealing trials killed the writer with hours half sealed on disk (log entries and chunks of one hour)', () => {
    // Not vacuous: at least one kill landed between a batch and the end of the seal it made due.
    expect(halfSealed.kills).toBe(TRIALS.filter((trial) => trial.sealing).length * CYCLES_PER_TRIAL)
    expect(halfSealed.found, JSON.stringify(halfSealed)).toBeGreaterThan(0)
  })
})
