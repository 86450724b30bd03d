/**
 * POST /prices under SIGKILL: a child `price-store serve` with a write token
 * takes batches posted in a loop (several writers at once) and is killed at
 * seeded moments while batches are in flight; the store is then reopened.
 * Every batch the server acknowledged (200) must be stored whole, and every
 * batch in flight at the kill must be stored whole or not at all. Three
 * cycles on one database, so the positions acknowledged must also keep
 * growing across restarts.
 *
 * Set RELIABILITY_SEED to replay another schedule; a failure names the seed.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DEFAULT_PROVIDER } from '../../src/cli/config.js'
import { PriceStore } from '../../src/index.js'
import { bundleChild, startChild, type ChildBundle } from './child-process.js'
import { prng } from './crash-plan.js'

const SEED = Number(process.env.RELIABILITY_SEED ?? 20_261_126)
const TOKEN = 'kill_3e8d1c0b7a9f46e2b5d4c3a2f1e0d9c8'
const CYCLES = 3
const WRITERS = 3
const BATCH = 40
const SYMBOLS = ['BTC', 'ETH', 'AR', 'BTC-USD']

let bundle: ChildBundle
let dir: string

beforeAll(async () => {
  bundle = await bundleChild('../../src/cli/main.ts')
  dir = await mkdtemp(join(tmpdir(), 'price-store-write-kill-'))
})

afterAll(async () => {
  await bundle?.cleanup()
  if (dir !== undefined) await rm(dir, { recursive: true, force: true })
})

/** Batch `n`'s records: ids `n/i`, spread over the symbols, at timestamps no other batch uses. */
function batchRecords(n: number): Record<string, unknown>[] {
  return Array.from({ length: BATCH }, (_, i) => ({
    id: `${n}/${i}`,
    symbol: SYMBOLS[i % SYMBOLS.length],
    provider: DEFAULT_PROVIDER.id,
    value: n + i / 1000,
    signature: 'sig',
    permawebTx: 'tx',
    version: '0.4',
    source: { n },
    timestamp: 1_700_000_000_000 + n * BATCH + i,
  }))
}

describe('POST /prices survives kill -9', () => {
  it(`every acknowledged batch is stored whole, an in-flight one whole or not at all (seed ${SEED})`, async () => {
    const random = prng(SEED)
    const db = join(dir, 'db')
    const tokenFile = join(dir, 'token')
    await writeFile(tokenFile, TOKEN, { mode: 0o600 })
    const acknowledged = new Map<number, number>()
    const sent = new Set<number>()
    let next = 0
    let lastPosition = 0
    for (let cycle = 0; cycle < CYCLES; cycle++) {
      const child = startChild(bundle, ['serve', '--port', '0', '--db', db, '--write-token-file', tokenFile])
      const [, url] = await child.waitForLine(/^ {2}(http:\/\/\S+)\/prices$/)
      const killAfter = 5 + Math.floor(random() * 20)
      let acknowledgedNow = 0
      let killed = false
      const writer = async (): Promise<void> => {
        while (!killed) {
          const n = next++
          sent.add(n)
          let answer: { stored: number; position: number }
          try {
            const res = await fetch(`${url}/prices`, {
              method: 'POST',
              headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
              body: JSON.stringify(batchRecords(n)),
            })
            expect(res.status).toBe(200)
            answer = (await res.json()) as { stored: number; position: number }
          } catch (err) {
            if (!killed) throw err
            return // the connection died with the server: this batch was in flight
          }
          expect(answer.stored).toBe(BATCH)
          expect(answer.position).toBeGreaterThan(lastPosition)
          acknowledged.set(n, answer.position)
          if (++acknowledgedNow === killAfter) {
            // The other writers' batches are on their way: a short, seeded pause, then the kill lands among them.
            await new Promise((resolve) => setTimeout(resolve, Math.floor(random() * 5)))
            killed = true
            child.kill()
          }
        }
      }
      await Promise.all(Array.from({ length: WRITERS }, writer))
      expect(await child.ended).toBe('SIGKILL')
      lastPosition = Math.max(lastPosition, ...acknowledged.values())

      const store = await PriceStore.open(db, { provider: DEFAULT_PROVIDER, limits: { maxLimit: 1_000_000 } })
      try {
        const stored = new Map<number, Set<string>>()
        for (const symbol of SYMBOLS) {
          for (const record of await store.latest(symbol, { limit: 1_000_000 })) {
            const [n = '', i = ''] = record.id.split('/')
            if (!stored.has(Number(n))) stored.set(Number(n), new Set())
            stored.get(Number(n))!.add(i)
            expect(record).toEqual({ ...batchRecords(Number(n))[Number(i)], providerPublicKey: DEFAULT_PROVIDER.publicKey })
          }
        }
        for (const n of acknowledged.keys()) expect(stored.get(n)?.size, `acknowledged batch ${n} (seed ${SEED})`).toBe(BATCH)
        for (const [n, ids] of stored) {
          expect(sent.has(n), `batch ${n} stored but never sent (seed ${SEED})`).toBe(true)
          // Acknowledged or in flight at a kill: whole either way.
          expect(ids.size, `batch ${n} stored in part (seed ${SEED})`).toBe(BATCH)
        }
        expect(store.position).toBeGreaterThanOrEqual(lastPosition)
        lastPosition = store.position
      } finally {
        await store.close()
      }
    }
    expect(acknowledged.size).toBeGreaterThan(CYCLES * 5)
  }, 60_000)
})
