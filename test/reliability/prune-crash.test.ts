/**
 * Pruning under kill -9 (issue 11): a child process writes late records
 * (acknowledged) and prunes a store of 96 hours of six symbols; the test
 * kills it with SIGKILL at a seeded random moment of the prune, reopens the
 * store at once and checks, against the naive reference model:
 *
 * - the store opens, and every record at or after `before` (and every
 *   record of the symbols the prune was not about) is there, exactly once,
 *   with its exact contents; whatever else is there is an original record;
 * - the heads, chunks and symbol index agree with the records left (ranges
 *   read from heads and from chunks, several, symbols() all equal the model
 *   over what is there: a symbol with no record is not listed);
 * - pruning again finishes the work: the store then equals the model, and
 *   the second prune reports exactly the records the first one left.
 *
 * Set RELIABILITY_SEED to replay another schedule; a failure names the seed.
 */
import { cp, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PriceStore } from '../../src/index.js'
import type { PriceRecord, QueryParams } from '../../src/index.js'
import { referencePrune, referenceQuery, storedRecords, compareUtf8 } from '../../src/testing/reference-model.js'
import { bundleChild, startChild } from './child-process.js'
import type { ChildBundle } from './child-process.js'
import { CRASH_PROVIDER, CRASH_SYMBOLS, CRASH_T0, HOUR, keyOf, prng } from './crash-plan.js'
import { PRUNE_HOURS, baseRecords, lateRecords } from './prune-plan.js'

const SEED = Number(process.env.RELIABILITY_SEED ?? 20_261_207)
const TRIALS = 8
/** Kills land this long after the prune starts, at most: about the length of a prune here. */
const DELAY_MS = 150
const LIMITS = { maxLimit: 1_000_000, maxSymbols: 100, maxRangePoints: 1_000_000 }
const config = { provider: CRASH_PROVIDER, limits: LIMITS }

let bundle: ChildBundle
let root: string
let template: string

beforeAll(async () => {
  bundle = await bundleChild('./prune-child.ts')
  root = await mkdtemp(join(tmpdir(), 'price-store-prune-crash-'))
  template = join(root, 'template')
  const store = await PriceStore.open(template, { provider: CRASH_PROVIDER })
  const records = baseRecords()
  for (let i = 0; i < records.length; i += 5_000) await store.putMany(records.slice(i, i + 5_000))
  await store.close()
}, 120_000)

afterAll(async () => {
  await bundle?.cleanup()
  if (root !== undefined) await rm(root, { recursive: true, force: true })
})

/** Every record of every crash symbol in the store, by key, as returned JSON. */
async function dump(store: PriceStore): Promise<Map<string, string>> {
  const out = new Map<string, string>()
  for (const symbol of CRASH_SYMBOLS) {
    for (const record of await store.latest(symbol, { limit: LIMITS.maxLimit })) {
      const key = keyOf(record)
      expect(out.has(key), `${key} returned twice`).toBe(false)
      out.set(key, JSON.stringify(record))
    }
  }
  return out
}

/** Ranges from heads (10 min, 1 h), from chunks (7 min), several and symbols() against the model over `records`. */
async function expectConsistent(store: PriceStore, records: readonly PriceRecord[], label: string): Promise<void> {
  const check = async (params: QueryParams): Promise<void> => {
    expect(JSON.stringify(await store.query(params)), `${label}: ${JSON.stringify(params)}`).toBe(
      JSON.stringify((referenceQuery(records, params, config) as { answer: unknown }).answer),
    )
  }
  for (const symbol of CRASH_SYMBOLS) {
    for (const interval of [600_000, HOUR, 7 * 60_000]) {
      await check({ symbol, fromTimestamp: '0', toTimestamp: String(Number.MAX_SAFE_INTEGER), interval: String(interval) })
    }
  }
  await check({})
  expect(await store.symbols(), `${label}: symbols()`).toEqual([...new Set(records.map((r) => r.symbol))].sort(compareUtf8))
}

describe('prune under kill -9', () => {
  it(`leaves every record at or after before, a consistent store, and finishes when run again (seed ${SEED})`, async () => {
    const random = prng(SEED)
    const seen = { finished: 0, partial: 0 }
    for (let trial = 0; trial < TRIALS; trial++) {
      const hour = 1 + Math.floor(random() * (PRUNE_HOURS - 2))
      // On an hour boundary, inside an hour, or past the end of the shortest symbol.
      const before = trial % 4 === 0 ? CRASH_T0 + hour * HOUR : CRASH_T0 + hour * HOUR + 1 + Math.floor(random() * (HOUR - 1))
      const symbol = trial % 3 === 2 ? CRASH_SYMBOLS[Math.floor(random() * CRASH_SYMBOLS.length)] : undefined
      const delay = Math.floor(random() * DELAY_MS)
      const label = `seed ${SEED}, trial ${trial}: prune before ${before}${symbol === undefined ? '' : ` of ${symbol}`}, killed ${delay} ms in`
      const dir = join(root, `trial-${trial}`)
      await cp(template, dir, { recursive: true })

      const child = startChild(bundle, [dir, String(before), ...(symbol === undefined ? [] : [symbol])])
      await child.waitForLine(/^PRUNING$/)
      await new Promise((resolve) => setTimeout(resolve, delay))
      child.kill()
      const ended = await child.ended
      const finished = child.lines().some((line) => line.startsWith('DONE'))
      // Killed, or (a kill that came too late) ended by itself after the prune.
      expect(ended, `${label}: ${child.stderr()}`).toBe(finished ? ended : 'SIGKILL')
      if (ended !== 'SIGKILL') expect(ended, `${label}: ${child.stderr()}`).toBe(0)

      const stored = storedRecords([...baseRecords(), ...lateRecords(before)], CRASH_PROVIDER)
      const model = referencePrune(stored, before, symbol)
      const byKey = new Map(stored.map((record) => [keyOf(record), JSON.stringify(record)]))
      const store = await PriceStore.open(dir, { provider: CRASH_PROVIDER, limits: LIMITS })
      try {
        const present = await dump(store)
        for (const record of model.left) expect(present.get(keyOf(record)), `${label}: ${keyOf(record)} kept`).toBe(JSON.stringify(record))
        for (const [key, json] of present) expect(json, `${label}: ${key} is an original record`).toBe(byKey.get(key))
        const left = stored.filter((record) => present.has(keyOf(record)))
        const toGo = left.length - model.left.length
        if (finished) expect(toGo, `${label}: finished yet records left`).toBe(0)
        if (!finished && toGo > 0 && toGo < stored.length - model.left.length) seen.partial++
        if (finished) seen.finished++
        await expectConsistent(store, left, `${label}, after the kill`)

        const again = await store.prune({ before, ...(symbol === undefined ? {} : { symbol }) })
        expect(again.records, `${label}: the second prune`).toBe(toGo)
        await expectConsistent(store, model.left, `${label}, pruned again`)
        expect([...(await dump(store)).keys()].sort(), `${label}: what is left`).toEqual(model.left.map(keyOf).sort())
      } finally {
        await store.close()
      }
      await rm(dir, { recursive: true, force: true })
    }
    // Not vacuous: some kills landed half way through a prune.
    expect(seen.partial, JSON.stringify(seen)).toBeGreaterThan(0)
  }, 300_000)
})
