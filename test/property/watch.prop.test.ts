/**
 * store.watch() against a model of the commits: random batches (repeated
 * keys, rewrites, several hours, sealing after every batch or not), and
 * watchers started at random moments (between batches, or while a batch is
 * between LevelDB and memory, or while their replay reads) from random
 * positions with random symbol filters. Each watcher must receive, in
 * order, exactly the model's commits after its position that hold records
 * for its filter, each with exactly those record keys (no gap, no repeat),
 * each record equal to what that commit or a later rewrite of it wrote
 * (replay reads records as they are now, live ones as committed), with
 * positions that only grow.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ClassicLevel } from 'classic-level'
import fc from 'fast-check'
import { MemoryLevel } from 'memory-level'
import { afterAll, describe, expect, it } from 'vitest'
import { PriceStore } from '../../src/index.js'
import type { WatchItem } from '../../src/index.js'
import { TEST_PROVIDER as PROVIDER, T0 } from '../../src/testing/records.js'
import { expected, rec } from '../support/records.js'

const scale = Number(process.env['FC_SCALE']) || 1
const SYMBOLS = ['A', 'B', 'C'] as const
const SLOT_MS = 20 * 60_000
const dirs: string[] = []

afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true })
})

interface Written {
  readonly symbol: string
  readonly slot: number
  readonly id: string
}

interface WatcherPlan {
  /** Started around the write of batch `at` (modulo the number of batches). */
  readonly at: number
  /** `none`: no `after` (live from the call); otherwise a fraction of the head at the start. */
  readonly after: 'none' | number
  readonly symbols: readonly string[] | undefined
  /** How many microtask turns after starting that batch's write the watcher starts (0: before it). */
  readonly ticks: number
}

const writtenArb = fc.record({ symbol: fc.constantFrom(...SYMBOLS), slot: fc.integer({ min: 0, max: 11 }), id: fc.constantFrom('x', 'y') })
const scenarioArb: fc.Arbitrary<Scenario> = fc.record({
  batches: fc.array(fc.array(writtenArb, { minLength: 1, maxLength: 6 }), { minLength: 1, maxLength: 20 }),
  watchers: fc.array(
    fc.record({
      at: fc.nat(),
      after: fc.oneof(fc.constant<'none'>('none'), fc.constantFrom(0, 0.5, 1), fc.double({ min: 0, max: 1, noNaN: true })),
      symbols: fc.option(fc.subarray([...SYMBOLS], { minLength: 1 }), { nil: undefined }),
      ticks: fc.integer({ min: 0, max: 12 }),
    }),
    { minLength: 1, maxLength: 5 },
  ),
  openBytes: fc.constantFrom(0, undefined),
})

const keyOf = (r: { symbol: string; timestamp: number; id: string }): string => `${r.symbol}|${r.timestamp}|${r.id}`

/** Keeps each key once, at its last place, as a batch stores it. */
function lastOfEach<T extends { symbol: string; timestamp: number; id: string }>(items: readonly T[]): T[] {
  const last = new Map<string, number>()
  items.forEach((item, index) => last.set(keyOf(item), index))
  return items.filter((item, index) => last.get(keyOf(item)) === index)
}

interface Scenario {
  readonly batches: readonly (readonly Written[])[]
  readonly watchers: readonly WatcherPlan[]
  readonly openBytes: number | undefined
}

async function runScenario(db: MemoryLevel<any, any> | ClassicLevel<any, any>, scenario: Scenario): Promise<void> {
  const store = await PriceStore.open(db, { provider: PROVIDER, ...(scenario.openBytes === undefined ? {} : { openBytes: scenario.openBytes }) })
  try {
    let value = 0
    const inputs = scenario.batches.map((batch) => batch.map((w) => rec({ symbol: w.symbol, timestamp: T0 + w.slot * SLOT_MS, id: w.id, value: ++value })))
    // The sentinel: one record of every symbol, so every watcher sees the last commit and can stop there.
    inputs.push(SYMBOLS.map((symbol) => rec({ symbol, timestamp: T0 + 100 * SLOT_MS, id: 'z', value: ++value })))
    const last = inputs.length
    // The model: commit n (1-based) stores its batch's keys once each; every version of a key by commit.
    const commits = inputs.map((batch) => lastOfEach(batch as { symbol: string; timestamp: number; id: string }[]))
    const versions = new Map<string, { position: number; json: string }[]>()
    commits.forEach((records, index) => {
      for (const record of records) {
        const list = versions.get(keyOf(record)) ?? []
        list.push({ position: index + 1, json: JSON.stringify(expected(record as never)) })
        versions.set(keyOf(record), list)
      }
    })

    const watchers: { plan: WatcherPlan; after: number; items: WatchItem[]; done: Promise<void> }[] = []
    const start = (plan: WatcherPlan): void => {
      const after = plan.after === 'none' ? undefined : Math.floor(plan.after * store.position)
      const watch = store.watch({ ...(after === undefined ? {} : { after }), ...(plan.symbols === undefined ? {} : { symbols: plan.symbols }) })
      const items: WatchItem[] = []
      const entry = { plan, after: after ?? store.position, items, done: Promise.resolve() }
      entry.done = (async () => {
        for await (const item of watch) {
          items.push(item)
          if (item.position >= last) break
        }
      })()
      watchers.push(entry)
    }
    for (let n = 0; n < inputs.length; n++) {
      // Watchers start by the last batch before the sentinel at the latest, so the sentinel reaches each of them.
      const starting = scenario.watchers.filter((plan) => plan.at % (last - 1) === n)
      for (const plan of starting.filter((p) => p.ticks === 0)) start(plan)
      const write = store.putMany(inputs[n] as never)
      const later = starting.filter((p) => p.ticks > 0).sort((a, b) => a.ticks - b.ticks)
      let turn = 0
      for (const plan of later) {
        while (turn < plan.ticks) {
          await Promise.resolve()
          turn++
        }
        start(plan)
      }
      await write
    }
    const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`a watcher never reached the last commit: ${JSON.stringify(watchers.map((w) => [w.plan, w.after, w.items]))}`)), 5_000).unref())
    await Promise.race([Promise.all(watchers.map((w) => w.done)), timeout])

    for (const { plan, after, items } of watchers) {
      const context = JSON.stringify({ plan, after })
      const filter = plan.symbols === undefined ? undefined : new Set(plan.symbols)
      const expectedCommits: [number, string[]][] = []
      commits.forEach((records, index) => {
        if (index + 1 <= after) return
        const keys = records.filter((r) => filter === undefined || filter.has(r.symbol)).map(keyOf)
        if (keys.length > 0) expectedCommits.push([index + 1, keys])
      })
      const received = items.filter((item) => item.type === 'records').map((item) => [item.position, item.records.map(keyOf)])
      expect(received, context).toEqual(expectedCommits)
      expect(items.filter((item) => item.type !== 'records' && item.type !== 'progress'), context).toEqual([])
      items.forEach((item, i) => {
        if (i > 0) expect(item.position, context).toBeGreaterThan((items[i - 1] as WatchItem).position)
        if (item.type !== 'records') return
        for (const record of item.records) {
          const allowed = (versions.get(keyOf(record)) ?? []).filter((v) => v.position >= item.position).map((v) => v.json)
          expect(allowed, `${context}: ${keyOf(record)} at ${item.position}`).toContain(JSON.stringify(record))
        }
      })
    }
  } finally {
    await store.close()
  }
}

describe('store.watch() against a model of the commits', () => {
  it('memory-level: every watcher gets exactly the commits after its position, in order', async () => {
    await fc.assert(fc.asyncProperty(scenarioArb, (scenario) => runScenario(new MemoryLevel(), scenario)), { numRuns: 60 * scale })
  })

  it('classic-level: the same', async () => {
    await fc.assert(
      fc.asyncProperty(scenarioArb, async (scenario) => {
        const dir = await mkdtemp(join(tmpdir(), 'helper-watch-prop-'))
        dirs.push(dir)
        await runScenario(new ClassicLevel(dir), scenario)
      }),
      { numRuns: 10 * scale },
    )
  })
})
