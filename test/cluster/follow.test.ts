/**
 * A read copy without NATS (`HttpFollowLog`, `serve --follow`): a follower
 * applies its primary's live stream through the cluster's apply path, each
 * commit at the primary's position, resumes where it stopped when the
 * primary comes back, and stops with PRICE_REPLICA_DIVERGED when the
 * primary can no longer replay what it missed. In-process servers on
 * loopback; every wait is for an observable state.
 */
import { MemoryLevel } from 'memory-level'
import { afterEach, describe, expect, it } from 'vitest'
import { BENCH_PROVIDER, DEFAULT_SEED, dataShape, generateBatches, type GeneratedRecord } from '../../bench/generate.js'
import type { RunningServer } from '../../src/adapters/http/node.js'
import { ClusterNode } from '../../src/cluster.js'
import { PriceStore } from '../../src/index.js'
import { TEST_PROVIDER } from '../../src/testing/records.js'
import { until } from '../support/http/operations-helpers.js'
import { exportedRecords, timedBatch } from './support/store-fixtures.js'
import { followPrimary, servePrimary } from './support/follow-fixtures.js'

const cleanup: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step()
})

async function openStore(options: { journal?: { commits: number } } = {}, provider = TEST_PROVIDER): Promise<PriceStore> {
  const store = await PriceStore.open(new MemoryLevel(), { provider, ...options })
  cleanup.push(() => store.close())
  return store
}

const serve = (store: PriceStore, port = 0): Promise<RunningServer> => servePrimary(cleanup, store, port)

const follow = (store: PriceStore, url: string): Promise<ClusterNode> => followPrimary(cleanup, store, url)

const batch = timedBatch

const exported = exportedRecords

/** The first `count` RedStone-shaped records (684-character signatures, 5-30 sources) of the generator run from `seed`. */
function redstoneBatch(count: number, seed: number): GeneratedRecord[] {
  const [first] = generateBatches(dataShape(1), count, seed)
  return first as GeneratedRecord[]
}

describe('a follower of one primary over HTTP', () => {
  it('applies what the primary holds and what it takes next, at the primary positions', async () => {
    const primary = await openStore()
    await primary.putMany(batch(0, 5))
    await primary.putMany(batch(0, 3, 'ETH'))
    const server = await serve(primary)
    const copy = await openStore()
    const node = await follow(copy, server.url)
    expect(await node.waitForPosition(primary.position, 10_000)).toBe(true)
    for (let i = 0; i < 5; i++) await primary.putMany(batch(10 + i * 3, 3, i % 2 === 0 ? 'AR' : 'BTC'))
    expect(await node.waitForPosition(primary.position, 10_000)).toBe(true)
    expect(copy.position).toBe(primary.position)
    expect(await exported(copy)).toEqual(await exported(primary))
    expect(node.replication()).toMatchObject({ state: 'applying', stream: server.url, position: primary.position, appliedBatches: 7, appliedRecords: 23 })
    // It takes no writes.
    await expect(node.putBatch(batch(100, 1))).rejects.toMatchObject({ code: 'PRICE_LOG_UNAVAILABLE' })
  })

  it('goes on from where it stopped when its primary comes back', async () => {
    const primary = await openStore()
    await primary.putMany(batch(0, 2))
    const first = await serve(primary)
    const port = Number(new URL(first.url).port)
    const copy = await openStore()
    const node = await follow(copy, first.url)
    expect(await node.waitForPosition(1, 10_000)).toBe(true)
    cleanup.pop()
    await first.close()
    await until(() => node.replication().state === 'connecting', 'the follower notices its primary is gone')
    await primary.putMany(batch(10, 2))
    await primary.putMany(batch(20, 2))
    await serve(primary, port)
    expect(await node.waitForPosition(3, 15_000)).toBe(true)
    expect(await exported(copy)).toEqual(await exported(primary))
  })

  it('stops with PRICE_REPLICA_DIVERGED when the primary no longer holds the commits it missed', async () => {
    const primary = await openStore({ journal: { commits: 2 } })
    for (let i = 0; i < 5; i++) await primary.putMany(batch(i, 1))
    const server = await serve(primary)
    const copy = await openStore()
    const node = await follow(copy, server.url)
    await until(() => node.replication().state === 'failed', 'the follower fails')
    expect(node.replication().error?.code).toBe('PRICE_REPLICA_DIVERGED')
    expect(copy.position).toBe(0)
  })

  it('keeps up with commits of any size: 1,000 RedStone-shaped records replayed and 10,000 live, each one event', async () => {
    const primary = await openStore({}, BENCH_PROVIDER)
    const replayed = redstoneBatch(1_000, DEFAULT_SEED)
    expect(replayed[0]?.signature).toHaveLength(684)
    expect(await primary.putMany(replayed)).toBe(1_000)
    const server = await serve(primary)
    const copy = await openStore({}, BENCH_PROVIDER)
    const node = await follow(copy, server.url)
    expect(await node.waitForPosition(1, 30_000)).toBe(true)
    // Caught up and idle: the next commit reaches it live, as one event of 10,000 records.
    const live = redstoneBatch(10_000, DEFAULT_SEED + 1)
    expect(await primary.putMany(live)).toBe(10_000)
    expect(await node.waitForPosition(2, 60_000)).toBe(true)
    expect(node.replication()).toMatchObject({ state: 'applying', position: 2, appliedBatches: 2, appliedRecords: 11_000 })
    expect(copy.position).toBe(primary.position)
    expect(await exported(copy)).toEqual(await exported(primary))
  }, 120_000)
})
