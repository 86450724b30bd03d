/**
 * The commit journal under SIGKILL: a child writes the crash plan's batches
 * and prints the position of each acknowledged commit; the test kills it at
 * seeded moments (while it opens, in the middle of a batch, between
 * batches, where seals run), reopens the store and replays the journal from
 * position 0. The replay must be exactly the acknowledged commits of every
 * cycle so far, at their acknowledged positions, each listing its batch's
 * keys, plus at most the batch in flight at a kill, whole, after them. The
 * keys the journal lists must be exactly the keys the store holds (it
 * never lists an unwritten batch nor misses a written one), every replayed
 * record must be the record stored now, and positions continue past every
 * restart.
 *
 * Set RELIABILITY_SEED to replay another schedule; a failure names the seed.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PriceStore } from '../../src/index.js'
import type { PriceRecord, WatchItem } from '../../src/index.js'
import { expected } from '../support/records.js'
import { CRASH_PROVIDER, batchRecords, keyOf, prng } from './crash-plan.js'
import type { CrashLayout, CrashRecord } from './crash-plan.js'
import { bundleChild, startChild } from './child-process.js'
import type { ChildBundle } from './child-process.js'

const SEED = Number(process.env.RELIABILITY_SEED ?? 20_261_211)
const CYCLES = 3
const LIMITS = { maxLimit: 1_000_000, maxRangePoints: 1_000_000 }

let bundle: ChildBundle
const dirs: string[] = []

beforeAll(async () => {
  bundle = await bundleChild('./watch-writer.ts')
})

afterAll(async () => {
  await bundle?.cleanup()
  for (const dir of dirs) await rm(dir, { recursive: true, force: true })
})

const sleep = (ms: number): Promise<unknown> => new Promise((resolve) => setTimeout(resolve, ms))

/** A batch's keys as a commit lists them: each once, at its last place. */
function commitKeys(n: number, layout: CrashLayout): string[] {
  const keys = batchRecords(n, layout).map(keyOf)
  return keys.filter((key, index) => keys.lastIndexOf(key) === index)
}

/** Runs the writer from batch `first` and kills it at a seeded moment; the acknowledged batches and their positions. */
async function writeUntilKilled(dir: string, first: number, random: () => number, openBytes: number | undefined, layout: CrashLayout) {
  const running = startChild(bundle, [dir, String(first), String(openBytes ?? 'default'), layout])
  let how: string
  try {
    const roll = random()
    if (roll < 0.2) {
      const delay = Math.floor(random() * 150)
      how = `${delay} ms after spawn`
      await sleep(delay)
    } else if (roll < 0.6) {
      const target = first + Math.floor(random() * 6)
      await running.waitForLine(new RegExp(`^BEGIN ${target}$`))
      const delay = Math.floor(random() * 6)
      how = `${delay} ms after BEGIN ${target}`
      if (delay > 0) await sleep(delay)
    } else {
      const acks = 1 + Math.floor(random() * 6)
      await running.waitForLine(new RegExp(`^ACK ${first + acks - 1} `))
      const delay = Math.floor(random() * 20)
      how = `${delay} ms after ACK ${first + acks - 1}`
      if (delay > 0) await sleep(delay)
    }
  } finally {
    running.kill()
  }
  const ended = await running.ended
  expect(ended, `the writer should die by SIGKILL; stderr: ${running.stderr()}`).toBe('SIGKILL')
  const acked: { batch: number; position: number }[] = []
  for (const line of running.lines()) {
    const match = /^ACK (\d+) (\d+)$/.exec(line)
    if (match !== null) acked.push({ batch: Number(match[1]), position: Number(match[2]) })
  }
  return { acked, how }
}

async function replayAll(store: PriceStore): Promise<WatchItem[]> {
  const items: WatchItem[] = []
  const head = store.position
  if (head === 0) return items
  for await (const item of store.watch({ after: 0 })) {
    items.push(item)
    if (item.position >= head) break
  }
  return items
}

const TRIALS: readonly { openBytes: number | undefined; layout: CrashLayout }[] = [
  { openBytes: undefined, layout: 'minutes' },
  // Seals after every batch: replayed records come from chunks, and a kill often lands in a seal.
  { openBytes: 0, layout: 'hours' },
]

describe('commit journal: SIGKILL during ingest', () => {
  TRIALS.forEach(({ openBytes, layout }, index) => {
    it(`trial ${index} (seed ${SEED}, openBytes ${openBytes ?? 'default'}, ${layout}): replay from 0 is the acknowledged commits, plus at most the one in flight`, async () => {
      const random = prng(SEED + index * 7_919)
      const dir = await mkdtemp(join(tmpdir(), 'helper-watch-crash-'))
      dirs.push(dir)
      /** The model: every batch stored so far, in commit order, with its position. */
      const commits: { batch: number; position: number }[] = []
      const state = new Map<string, CrashRecord>()
      for (let cycle = 0; cycle < CYCLES; cycle++) {
        const first = (commits[commits.length - 1]?.batch ?? 0) + 1
        const { acked, how } = await writeUntilKilled(dir, first, random, openBytes, layout)
        const context = `seed ${SEED} trial ${index} cycle ${cycle}, killed ${how}`
        acked.forEach((ack, i) => {
          expect(ack.batch, `${context}: ACKs in order`).toBe(first + i)
          const before = i === 0 ? commits[commits.length - 1]?.position ?? 0 : (acked[i - 1] as { position: number }).position
          expect(ack.position, `${context}: positions grow, across restarts too`).toBeGreaterThan(before)
        })
        commits.push(...acked)

        const store = await PriceStore.open(dir, { provider: CRASH_PROVIDER, limits: LIMITS })
        try {
          const replayed = (await replayAll(store)).filter((item): item is Extract<WatchItem, { type: 'records' }> => {
            expect(item.type, `${context}: a replay from 0 of an untrimmed journal holds only records`).toBe('records')
            return item.type === 'records'
          })
          // At most one commit more than acknowledged: the batch in flight, whole.
          expect(replayed.length - commits.length, `${context}: commits replayed beyond those acknowledged`).toBeGreaterThanOrEqual(0)
          expect(replayed.length - commits.length, `${context}: commits replayed beyond those acknowledged`).toBeLessThanOrEqual(1)
          const extra = replayed[commits.length]
          if (extra !== undefined) commits.push({ batch: (commits[commits.length - 1]?.batch ?? 0) + 1, position: extra.position })
          expect(store.position, `${context}: the head is the last commit`).toBe(commits[commits.length - 1]?.position ?? 0)
          replayed.forEach((item, i) => {
            const { batch, position } = commits[i] as { batch: number; position: number }
            expect(item.position, `${context}: commit ${i} is batch ${batch}`).toBe(position)
            expect(item.records.map(keyOf), `${context}: the keys of batch ${batch}`).toEqual(commitKeys(batch, layout))
          })
          // Replay reads records as they are now: compare with the stored state after every batch present.
          state.clear()
          for (const { batch } of commits) for (const record of batchRecords(batch, layout)) state.set(keyOf(record), record)
          const journalKeys = new Set<string>()
          for (const item of replayed) {
            for (const record of item.records) {
              journalKeys.add(keyOf(record))
              expect(JSON.stringify(record), `${context}: ${keyOf(record)} as stored`).toBe(JSON.stringify(expected(state.get(keyOf(record)) as never, { provider: CRASH_PROVIDER })))
            }
          }
          const storedKeys = new Set<string>()
          for (const symbol of await store.symbols()) {
            for (const record of await store.latest(symbol, { limit: LIMITS.maxLimit })) storedKeys.add(keyOf(record as PriceRecord))
          }
          expect([...journalKeys].sort(), `${context}: the journal lists exactly the stored keys`).toEqual([...storedKeys].sort())
          expect(storedKeys.size, `${context}: the model`).toBe(state.size)
        } finally {
          await store.close()
        }
      }
      expect(commits.length, 'the schedule should store some batches').toBeGreaterThan(0)
    })
  })
})
