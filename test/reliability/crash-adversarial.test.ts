/**
 * Crash safety over the adversarial history (issue 20): a child process
 * (adversarial-writer.ts) writes the batches of `adversarialHistory(seed)`
 * (bench/adversarial-history.ts: batches of 1–2,000 records over 30 symbols
 * with rewrites, ties, late records, backfills and timestamps anywhere in
 * 0..2^53−1) with a small `openBytes`, so hours are sealed while it writes
 * and records reaching sealed hours become delta parts or chunk rewrites;
 * the test kills it with SIGKILL at seeded random moments (while it opens,
 * just after, while a batch is written, after some acknowledgements),
 * reopens the store and checks against a naive model (key → last record):
 *
 * - every acknowledged batch is there whole, every record once, exact values;
 * - the batch in flight at the kill is there entirely or not at all;
 * - stats() counts (read from the heads entries) equal the model's, and
 *   sampled queries (latest, as-of, ranges at 1 ms and 10 min, candles)
 *   equal the reference model;
 * - the next cycle goes on from what is there.
 *
 * The verdict holds for every kill point; only where the kills land varies.
 * Set RELIABILITY_SEED to replay another schedule; a failure names the seed.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ClassicLevel } from 'classic-level'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { adversarialHistory, recordKey } from '../../bench/adversarial-history.js'
import { BENCH_PROVIDER, type GeneratedRecord } from '../../bench/generate.js'
import { PriceStore } from '../../src/index.js'
import type { QueryParams } from '../../src/index.js'
import { compareUtf8, outcomeOf, referenceQuery, storedRecords } from '../../src/testing/reference-model.js'
import { expectSameOutcome } from '../property/hours-model.js'
import { bundleChild, lastAckAfterKill, startChild, type ChildBundle } from './child-process.js'
import { prng } from './crash-plan.js'
import { runs } from '../support/full-runs.js'

const SEED = Number(process.env.RELIABILITY_SEED ?? 20_261_126)
const HISTORY_SEED = 0xad7e_5a11
const BATCHES = 150
/** Kill cycles: two in `npm test`, four in the slow set (`npm run test:slow`, run by CI too). */
const CYCLES = runs(2, 4)
/** Small: the open area goes over it every few batches, so seals (and delta parts) run under the kills. */
const OPEN_BYTES = 256 * 1024
const LIMITS = { maxLimit: 1_000_000, maxRangePoints: 1_000_000, maxSymbols: 1_000 }
const MAX = Number.MAX_SAFE_INTEGER
const DELTA_PART = 0x8000

const history = adversarialHistory(HISTORY_SEED, { batches: BATCHES, provider: BENCH_PROVIDER.id })
let bundle: ChildBundle
const dirs: string[] = []
const openStores: PriceStore[] = []

beforeAll(async () => {
  bundle = await bundleChild('./adversarial-writer.ts')
})
afterEach(async () => {
  for (const store of openStores.splice(0)) await store.close().catch(() => {})
})
afterAll(async () => {
  await bundle?.cleanup()
  for (const dir of dirs) await rm(dir, { recursive: true, force: true })
})

type State = Map<string, GeneratedRecord>

function applyBatch(state: State, n: number): void {
  for (const record of history[n] ?? []) state.set(recordKey(record), record)
}

function asJson(state: State): Map<string, string> {
  const out = new Map<string, string>()
  for (const record of storedRecords([...state.values()], BENCH_PROVIDER)) out.set(recordKey(record), JSON.stringify(record))
  return out
}

/** Every record in the store, by key, as returned JSON; a key seen twice is marked a duplicate. */
async function dump(store: PriceStore): Promise<Map<string, string>> {
  const out = new Map<string, string>()
  for await (const record of store.export()) {
    const key = recordKey(record)
    const held = out.get(key)
    out.set(key, held === undefined ? JSON.stringify(record) : `DUPLICATE ${held} AND ${JSON.stringify(record)}`)
  }
  return out
}

function differences(actual: Map<string, string>, expected: Map<string, string>): string[] {
  const out: string[] = []
  for (const [key, value] of expected) if (actual.get(key) !== value) out.push(`${JSON.stringify(key)}: expected ${value.slice(0, 120)}, got ${actual.get(key)?.slice(0, 200) ?? 'nothing'}`)
  for (const key of actual.keys()) if (!expected.has(key)) out.push(`${JSON.stringify(key)}: unexpected ${actual.get(key)?.slice(0, 200)}`)
  return out
}

/** Delta parts and chunk keys on disk (reported, not asserted: how many depends on where the kills landed). */
async function deltaKeys(dir: string): Promise<number> {
  const db = new ClassicLevel(dir)
  try {
    let deltas = 0
    for (const key of await db.sublevel<Uint8Array, Uint8Array>('c', { keyEncoding: 'view', valueEncoding: 'view' }).keys().all()) {
      if (Buffer.from(key).readUInt16BE(key.length - 2) >= DELTA_PART) deltas++
    }
    return deltas
  } finally {
    await db.close()
  }
}

const sleep = (ms: number): Promise<unknown> => new Promise((resolve) => setTimeout(resolve, ms))

/** Runs the writer from batch `first`, kills it at a seeded moment; the last acknowledged batch (or undefined) and how. */
async function writeUntilKilled(dir: string, first: number, random: () => number): Promise<{ lastAck: number | undefined; how: string }> {
  const running = startChild(bundle, [dir, String(first), String(HISTORY_SEED), String(BATCHES), String(OPEN_BYTES)])
  const last = BATCHES - 1
  let how: string
  try {
    const roll = random()
    if (roll < 0.15) {
      const delay = Math.floor(random() * 150)
      how = `${delay} ms after spawn`
      await sleep(delay)
    } else if (roll < 0.35) {
      // Just after opening: it replays the log and seals what the last kill left open.
      await running.waitForLine(/^READY$/)
      const delay = Math.floor(random() * 30)
      how = `${delay} ms after READY`
      if (delay > 0) await sleep(delay)
    } else if (roll < 0.65) {
      const target = Math.min(last, first + Math.floor(random() * 20))
      await running.waitForLine(new RegExp(`^BEGIN ${target}$`))
      const delay = Math.floor(random() * 8)
      how = `${delay} ms after BEGIN ${target} (${history[target]?.length} records)`
      if (delay > 0) await sleep(delay)
    } else {
      const target = Math.min(last, first + Math.floor(random() * 30))
      await running.waitForLine(new RegExp(`^ACK ${target}$`))
      const delay = random() < 0.3 ? 0 : Math.floor(random() * 30)
      how = `${delay} ms after ACK ${target}`
      if (delay > 0) await sleep(delay)
    }
  } finally {
    running.kill()
  }
  return { lastAck: await lastAckAfterKill(running, first), how }
}

/** Sampled queries of every form over the model, seeded. */
function sampledQueries(state: State, random: () => number): QueryParams[] {
  const records = [...state.values()]
  const symbols = [...new Set(records.map((r) => r.symbol))].sort(compareUtf8)
  const out: QueryParams[] = [{}, { toTimestamp: String(MAX) }]
  for (let k = 0; k < 4 && records.length > 0; k++) {
    const pick = records[Math.floor(random() * records.length)] as GeneratedRecord
    const symbol = pick.symbol
    const t = pick.timestamp
    const from = String(Math.max(0, t - 3 * 3_600_000))
    const to = String(Math.min(MAX, t + 3 * 3_600_000))
    out.push(
      { symbol, limit: '50' }, { symbol, toTimestamp: String(t) }, { symbol, toTimestamp: String(Math.max(0, t - 1)), direction: 'after' },
      { symbol, limit: '20', toTimestamp: String(t) },
      { symbol, interval: '1', fromTimestamp: from, toTimestamp: to },
      { symbol, interval: '600000', fromTimestamp: from, toTimestamp: to },
      { symbol, interval: '60000', fromTimestamp: from, toTimestamp: to, aggregate: 'candles' },
      { toTimestamp: String(t), symbols: symbols.slice(0, 5).join(',') },
    )
  }
  return out
}

describe('crash safety over the adversarial history: SIGKILL while late records, backfills and rewrites reach sealed hours', () => {
  it(`acknowledged batches survive once each, none is partial, counts and queries equal the model (seed ${SEED})`, async () => {
    const random = prng(SEED)
    const dir = await mkdtemp(join(tmpdir(), 'price-store-crash-adversarial-'))
    dirs.push(dir)
    const state: State = new Map()
    let next = 0
    const report: string[] = []
    for (let cycle = 0; cycle < CYCLES && next < BATCHES; cycle++) {
      const kill = await writeUntilKilled(dir, next, random)
      const lastAck = kill.lastAck ?? next - 1
      const context = `seed ${SEED} cycle ${cycle}, batches from ${next}, killed ${kill.how}`
      const deltasAtKill = await deltaKeys(dir)

      const store = await PriceStore.open(dir, { provider: BENCH_PROVIDER, limits: LIMITS, openBytes: OPEN_BYTES })
      openStores.push(store)
      const stored = await dump(store)
      for (let n = next; n <= lastAck; n++) applyBatch(state, n)
      const withoutInFlight = differences(stored, asJson(state))
      if (withoutInFlight.length === 0) {
        next = lastAck + 1
      } else {
        const inFlight = new Map(state)
        applyBatch(inFlight, lastAck + 1)
        const withInFlight = differences(stored, asJson(inFlight))
        expect(withInFlight, `${context}: the store matches neither the acknowledged batches ..${lastAck} nor those plus batch ${lastAck + 1} ` +
          `(${history[lastAck + 1]?.length} records). Without it: ${withoutInFlight.slice(0, 3).join('; ')}`).toEqual([])
        applyBatch(state, lastAck + 1)
        next = lastAck + 2
      }

      const model = storedRecords([...state.values()], BENCH_PROVIDER)
      const stats = await store.stats()
      expect(stats.records, `${context}: stats().records`).toBe(model.length)
      const perSymbol = new Map<string, number>()
      for (const r of model) perSymbol.set(r.symbol, (perSymbol.get(r.symbol) ?? 0) + 1)
      expect(Object.fromEntries(stats.perSymbol.map((s) => [s.symbol, s.records])), `${context}: stats().perSymbol`).toEqual(Object.fromEntries(perSymbol))
      const config = { provider: BENCH_PROVIDER, limits: { ...LIMITS } }
      for (const params of sampledQueries(state, random)) {
        expectSameOutcome(await outcomeOf(() => store.query(params)), referenceQuery(model, params, config), `${context}: ${JSON.stringify(params)}`)
      }
      await store.close()
      openStores.splice(openStores.indexOf(store), 1)
      report.push(`cycle ${cycle}: killed ${kill.how}, ${model.length} records, ${deltasAtKill} delta parts at the kill, ${await deltaKeys(dir)} after close`)
    }
    // Where the kills landed and how many delta parts there were (varies with the schedule; never part of the verdict).
    console.log(`crash-adversarial seed ${SEED}:\n  ${report.join('\n  ')}`)
  }, 120_000)
})

