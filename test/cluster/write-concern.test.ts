/**
 * The write concern: a write through a node answers once the log took it
 * and `writeConcern` distinct nodes (this one among them) reported that
 * they applied it; short of that within `applyWaitMs`, it fails with
 * PRICE_WRITE_CONCERN_TIMEOUT, and the same batch sent again (recognised
 * by the log) waits once more. Nodes on the in-memory log, whose
 * connections carry the nodes' reports; a node cut off cannot report, so a
 * write that needs it cannot be answered: every outcome here is decided by
 * what the nodes could apply, not by how fast they did.
 */
import { MemoryLevel } from 'memory-level'
import { afterEach, describe, expect, it } from 'vitest'
import { isNodeId, nodeIdOf } from '../../src/cluster/applied-positions.js'
import { ClusterNode, type FollowOptions } from '../../src/cluster.js'
import { PriceStore, isPriceStoreError } from '../../src/index.js'
import { TEST_PROVIDER, type InputRecord } from '../../src/testing/records.js'
import { until } from '../support/http/operations-helpers.js'
import { MemoryLog, type MemoryLogConnection } from './support/memory-log.js'
import { rejection, timedBatch } from './support/store-fixtures.js'

const cleanup: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step()
})

interface Member {
  readonly store: PriceStore
  readonly conn: MemoryLogConnection
  readonly node: ClusterNode
}

async function openStore(db = new MemoryLevel()): Promise<PriceStore> {
  const store = await PriceStore.open(db, { provider: TEST_PROVIDER })
  cleanup.push(() => store.close())
  return store
}

async function member(log: MemoryLog, nodeId: string, options: FollowOptions = {}, store?: PriceStore): Promise<Member> {
  const opened = store ?? await openStore()
  const conn = log.connect()
  const node = await ClusterNode.follow(opened, conn, { nodeId, ...options })
  cleanup.push(() => node.stop())
  return { store: opened, conn, node }
}

const records = (from: number, count = 1): InputRecord[] => timedBatch(from, count)

describe('a write with a write concern', () => {
  it('answers once as many nodes as asked applied it: each of them holds it when the write answers', async () => {
    const log = new MemoryLog({ maxMessageBytes: 4_096 })
    const a = await member(log, 'a')
    const b = await member(log, 'b')
    const c = await member(log, 'c')
    for (let i = 0; i < 5; i++) {
      const commit = await a.node.putBatch(records(i * 10, 3), { writeConcern: 3 })
      // Read at the instant the write answered: every node already applied it.
      expect([a, b, c].map((m) => m.store.position >= commit.position)).toEqual([true, true, true])
    }
    const own = await b.node.putBatch(records(100)) // the default: this node
    expect(b.store.position).toBeGreaterThanOrEqual(own.position)
    await until(() => (a.node.replication().peers ?? []).length === 2, 'a hears of b and c')
    expect(a.node.replication().node).toBe('a')
    expect(a.node.replication().peers?.map((p) => p.node).sort()).toEqual(['b', 'c'])
  })

  it('fails with PRICE_WRITE_CONCERN_TIMEOUT when fewer nodes can apply it; the batch is in the log, and sent again once they can, it answers', async () => {
    const log = new MemoryLog({ maxMessageBytes: 4_096 })
    const a = await member(log, 'a', { applyWaitMs: 300 })
    const b = await member(log, 'b')
    b.conn.setConnected(false)
    const batch = records(0, 2)
    const err = await rejection(a.node.putBatch(batch, { writeConcern: 2 }))
    expect(isPriceStoreError(err, 'PRICE_WRITE_CONCERN_TIMEOUT'), String(err)).toBe(true)
    const position = (err as { details: { position: number } }).details.position
    expect((err as Error).message).toMatch(new RegExp(`position ${position}, and 1 of the 2 nodes`))
    expect(log.lastCommit()).toBe(position) // in the log all the same
    expect(b.store.position).toBeLessThan(position)
    b.conn.setConnected(true)
    const again = await a.node.putBatch(batch, { writeConcern: 2 })
    expect(again.position).toBe(position) // recognised by the log: applied once
    expect(b.store.position).toBeGreaterThanOrEqual(position)
    expect(log.commitEntries()).toHaveLength(1)
  })

  it('counts a node once, across its restarts under the same id, and never more nodes than there are', async () => {
    const log = new MemoryLog({ maxMessageBytes: 4_096 })
    const a = await member(log, 'a', { applyWaitMs: 300 })
    const db = new MemoryLevel()
    const store = await PriceStore.open(db, { provider: TEST_PROVIDER })
    const first = await ClusterNode.follow(store, log.connect(), { nodeId: 'b' })
    await a.node.putBatch(records(0), { writeConcern: 2 })
    await first.stop()
    await store.close()
    const b = await member(log, 'b', {}, await openStore(db))
    const commit = await a.node.putBatch(records(10), { writeConcern: 2 })
    expect(b.store.position).toBeGreaterThanOrEqual(commit.position)
    const err = await rejection(a.node.putBatch(records(20), { writeConcern: 3 }))
    expect(isPriceStoreError(err, 'PRICE_WRITE_CONCERN_TIMEOUT'), String(err)).toBe(true)
    expect((err as Error).message).toMatch(/2 of the 3 nodes/)
  })

  it('0 answers once the log took the batch; a bad write concern or node id is refused before anything is sent', async () => {
    const log = new MemoryLog({ maxMessageBytes: 4_096 })
    const a = await member(log, 'a', { writeConcern: 0 })
    const commit = await a.node.putBatch(records(0))
    expect(log.lastCommit()).toBe(commit.position)
    for (const writeConcern of [-1, 1.5, 17]) {
      await expect(a.node.putBatch(records(10), { writeConcern })).rejects.toMatchObject({ code: 'PRICE_INVALID_OPTIONS' })
    }
    expect(log.commitEntries()).toHaveLength(1)
    // Ids made from host names and paths: unprintable characters replaced, long ones cut to a start and a hash.
    const long = `host:/${'deep/'.repeat(40)}`
    expect(nodeIdOf('host a:/srv/prices')).toBe('host_a:/srv/prices')
    for (const made of [nodeIdOf(`${long}a`), nodeIdOf(`${long}b`)]) expect(isNodeId(made)).toBe(true)
    expect(nodeIdOf(`${long}a`)).not.toBe(nodeIdOf(`${long}b`))
    for (const nodeId of ['', 'with space', 'x'.repeat(129)]) {
      await expect(ClusterNode.follow(await openStore(), log.connect(), { nodeId })).rejects.toMatchObject({ code: 'PRICE_INVALID_OPTIONS' })
    }
  })
})
