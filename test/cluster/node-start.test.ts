/**
 * Starting a cluster node on one real JetStream server (R1): the checks
 * made before a node follows a stream. A store with commits and a new
 * stream: the stream starts after the store's position. A store the stream
 * has trimmed past (retention by size here): refused with
 * PRICE_REPLICA_DIVERGED and a message saying how to re-seed it, nothing
 * applied. A store ahead of a stream that holds commits: refused too. And
 * two nodes in one process apply the same commits at the same positions.
 */
import { MemoryLevel } from 'memory-level'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { ClusterNode } from '../../src/cluster.js'
import { PriceStore } from '../../src/index.js'
import { TEST_PROVIDER } from '../../src/testing/records.js'
import { NATS_SKIP_REASON, natsServerPath, startNatsCluster, type NatsCluster } from './support/nats-cluster.js'
import { exportedRecords, timedBatch } from './support/store-fixtures.js'

const cleanup: (() => Promise<void>)[] = []
let nats: NatsCluster | undefined

beforeAll(async () => {
  if (natsServerPath() !== undefined) nats = await startNatsCluster({ size: 1 })
}, 60_000)
afterAll(async () => {
  await nats?.close()
})
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step().catch(() => {})
})

async function openStore(db = new MemoryLevel()): Promise<PriceStore> {
  const store = await PriceStore.open(db, { provider: TEST_PROVIDER })
  cleanup.push(() => store.close())
  return store
}

async function startNode(store: PriceStore, stream: string, extra: { maxBytes?: number; adoptEmptyStream?: boolean } = {}): Promise<ClusterNode> {
  const node = await ClusterNode.start(store, { servers: nats?.urls ?? [], stream, ...extra })
  cleanup.push(() => node.stop())
  return node
}

const batch = timedBatch

const exported = exportedRecords

describe.skipIf(natsServerPath() === undefined)(`a cluster node starting on a JetStream stream${natsServerPath() === undefined ? ` (${NATS_SKIP_REASON})` : ''}`, () => {
  it('two nodes apply the same commits at the same positions; a retried batch is applied once', async () => {
    const a = await openStore()
    const b = await openStore()
    const nodeA = await startNode(a, 'TWO')
    const nodeB = await startNode(b, 'TWO')
    const first = await nodeA.putBatch(batch(0, 10))
    const again = await nodeB.putBatch(batch(0, 10))
    expect(again).toEqual(first)
    const second = await nodeB.putBatch(batch(10, 5))
    expect(second.position).toBeGreaterThan(first.position)
    expect(await nodeA.waitForPosition(second.position, 10_000)).toBe(true)
    expect(await nodeB.waitForPosition(second.position, 10_000)).toBe(true)
    expect(a.position).toBe(second.position)
    expect(b.position).toBe(second.position)
    expect(await exported(a)).toEqual(await exported(b))
    expect(nodeA.replication()).toMatchObject({ state: 'applying', stream: 'TWO', position: second.position, appliedBatches: 2, appliedRecords: 15 })
  })

  it('a store with commits and a new stream, with adoptEmptyStream: the stream starts after the store position', async () => {
    const store = await openStore()
    await store.putMany(batch(0, 2))
    await store.putMany(batch(2, 2))
    const node = await startNode(store, 'ADOPTED', { adoptEmptyStream: true })
    const { position } = await node.putBatch(batch(4, 2))
    expect(position).toBe(3)
    expect(store.position).toBe(3)
  })

  it('a store with commits and an empty stream, without adoptEmptyStream: refused, the stream left empty (a lagging node never starts the history)', async () => {
    const leader = await openStore()
    for (let i = 0; i < 3; i++) await leader.putMany(batch(i * 2, 2))
    const lagging = await openStore()
    await lagging.putMany(batch(0, 2))
    const err = await ClusterNode.start(lagging, { servers: nats?.urls ?? [], stream: 'UNADOPTED' }).then(() => undefined, (e: unknown) => e)
    expect(err).toMatchObject({ code: 'PRICE_REPLICA_DIVERGED', details: { position: 1, parameter: 'adoptEmptyStream' } })
    // Refused before the stream is made: the node that adopts it next makes it as it needs.
    expect(String((err as Error).message)).toMatch(/the stream UNADOPTED does not exist: a node does not start a cluster's history by itself/)
    // The node whose history the cluster takes starts it, and the lagging one then follows... from its own position,
    // which the stream now starts after: it is told to re-seed, never silently given another history.
    const node = await startNode(leader, 'UNADOPTED', { adoptEmptyStream: true })
    expect((await node.putBatch(batch(100, 1))).position).toBe(4)
    await expect(ClusterNode.start(lagging, { servers: nats?.urls ?? [], stream: 'UNADOPTED' })).rejects.toMatchObject({ code: 'PRICE_REPLICA_DIVERGED', details: { position: 1 } })
    await expect(ClusterNode.start(lagging, { servers: nats?.urls ?? [], stream: 'UNADOPTED', adoptEmptyStream: 'yes' as never })).rejects.toMatchObject({ code: 'PRICE_INVALID_OPTIONS', details: { parameter: 'adoptEmptyStream' } })
  })

  it('a store with commits and an existing empty stream, without adoptEmptyStream: refused, the stream left as it is', async () => {
    await startNode(await openStore(), 'EMPTY')
    const store = await openStore()
    await store.putMany(batch(0, 2))
    const err = await ClusterNode.start(store, { servers: nats?.urls ?? [], stream: 'EMPTY' }).then(() => undefined, (e: unknown) => e)
    expect(err).toMatchObject({ code: 'PRICE_REPLICA_DIVERGED', details: { position: 1, parameter: 'adoptEmptyStream' } })
    expect(String((err as Error).message)).toMatch(/the stream EMPTY is empty/)
    const other = await startNode(await openStore(), 'EMPTY')
    expect((await other.putBatch(batch(10, 1))).position).toBe(1)
  })

  it('refuses a store ahead of a stream that holds commits', async () => {
    const writer = await openStore()
    await (await startNode(writer, 'AHEAD')).putBatch(batch(0, 1))
    const ahead = await openStore()
    for (let i = 0; i < 3; i++) await ahead.putMany(batch(i, 1))
    await expect(ClusterNode.start(ahead, { servers: nats?.urls ?? [], stream: 'AHEAD' })).rejects.toMatchObject({ code: 'PRICE_REPLICA_DIVERGED', details: { position: 3 } })
  })

  it('refuses a store whose next commits the stream no longer holds, saying how to re-seed it', async () => {
    const db = new MemoryLevel()
    const behind = await openStore(db)
    const node = await startNode(behind, 'TRIMMED', { maxBytes: 64 * 1024 })
    await node.putBatch(batch(0, 2))
    await node.stop()
    const writer = await openStore()
    const live = await startNode(writer, 'TRIMMED')
    // Each batch is about 20 KB: the stream keeps the newest three or so and drops the older ones.
    for (let i = 0; i < 12; i++) await live.putBatch(batch(100 + i * 20, 20))
    const err = await ClusterNode.start(behind, { servers: nats?.urls ?? [], stream: 'TRIMMED' }).then(() => undefined, (e: unknown) => e)
    expect(err).toMatchObject({ code: 'PRICE_REPLICA_DIVERGED', details: { position: behind.position } })
    expect(String((err as Error).message)).toMatch(/re-seed this node from a snapshot .* or from a backup/i)
    expect(behind.position).toBe(1)
  })

  it('refuses options it cannot use before connecting', async () => {
    const store = await openStore()
    await expect(ClusterNode.start(store, { servers: 'http://x' })).rejects.toMatchObject({ code: 'PRICE_INVALID_OPTIONS' })
    await expect(ClusterNode.start(store, { servers: 'nats://127.0.0.1:1', stream: 'bad name' })).rejects.toMatchObject({ code: 'PRICE_INVALID_OPTIONS' })
  })

  it('says PRICE_LOG_UNAVAILABLE when no server answers', async () => {
    const store = await openStore()
    // Port 1 on loopback: nothing listens there, so the connection is refused at once.
    await expect(ClusterNode.start(store, { servers: 'nats://127.0.0.1:1' })).rejects.toMatchObject({ code: 'PRICE_LOG_UNAVAILABLE' })
  })
})
