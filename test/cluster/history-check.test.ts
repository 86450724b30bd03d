/**
 * A node keeps the id of the commit at its position (`putBatch`'s
 * `commitId`) and stops with PRICE_REPLICA_DIVERGED when the log names
 * another message at that position, or ends before it: the log rewrote its
 * history (a JetStream cluster that came back without what it had
 * acknowledged). Without the check such a node would go on applying the
 * log's new commits after records the other nodes never saw. It then sends
 * the commits the log lost again (lost-commits.test.ts) and goes on only if
 * they land where it has them. The log is the in-memory one, with the loss
 * injected; every wait is for an observable state.
 */
import { MemoryLevel } from 'memory-level'
import { afterEach, describe, expect, it } from 'vitest'
import { ClusterNode } from '../../src/cluster.js'
import { PriceStore } from '../../src/index.js'
import { TEST_PROVIDER } from '../../src/testing/records.js'
import { until } from '../support/http/operations-helpers.js'
import { MemoryLog, type MemoryLogConnection } from './support/memory-log.js'
import { exportedRecords, timedBatch } from './support/store-fixtures.js'

const cleanup: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step()
})

async function openStore(db = new MemoryLevel<any, any>()): Promise<PriceStore> {
  const store = await PriceStore.open(db, { provider: TEST_PROVIDER })
  cleanup.push(() => store.close())
  return store
}

async function follow(store: PriceStore, connection: MemoryLogConnection): Promise<ClusterNode> {
  const node = await ClusterNode.follow(store, connection, { applyWaitMs: 0 })
  cleanup.push(() => node.stop())
  return node
}

const batch = timedBatch

const exported = exportedRecords

/** Writes `count` batches of 2 records through `node`, from timestamp slot `from`; resolves with their positions. */
async function write(node: ClusterNode, from: number, count: number, symbol = 'BTC'): Promise<number[]> {
  const positions: number[] = []
  for (let i = 0; i < count; i++) positions.push((await node.putBatch(batch(from + i * 2, 2, symbol))).position)
  return positions
}

describe('the commit id a store keeps with its position', () => {
  it('is the id putBatch was given, across a reopen, and none after a commit without one', async () => {
    const db = new MemoryLevel<any, any>()
    const store = await PriceStore.open(db, { provider: TEST_PROVIDER })
    expect(store.positionId).toBeUndefined()
    await store.putBatch(batch(0, 2), { position: 4, commitId: 'batch-a' })
    expect([store.position, store.positionId]).toEqual([4, 'batch-a'])
    await store.close()
    await store.open()
    expect([store.position, store.positionId]).toEqual([4, 'batch-a'])
    await store.putBatch(batch(10, 2))
    expect([store.position, store.positionId]).toEqual([5, undefined])
    await store.close()
    await store.open()
    // The key still names position 4, which is no longer the head.
    expect([store.position, store.positionId]).toEqual([5, undefined])
    await store.close()
  })

  it('refuses an id that is not a string of 1 to 256 characters, and writes nothing', async () => {
    const store = await openStore()
    for (const commitId of ['', 'x'.repeat(257), 7, null]) {
      await expect(store.putBatch(batch(0, 1), { position: 1, commitId: commitId as never })).rejects.toMatchObject({
        code: 'PRICE_INVALID_OPTIONS', details: { parameter: 'commitId' },
      })
    }
    expect(store.position).toBe(0)
    expect(await exported(store)).toEqual([])
  })
})

describe('a node whose log rewrote its history', () => {
  it('stops before applying past a position the log gave to another commit, with no break in delivery', async () => {
    const log = new MemoryLog({ maxMessageBytes: 64 * 1024 })
    const writerStore = await openStore()
    const writer = await follow(writerStore, log.connect())
    const connection = log.connect()
    const store = await openStore()
    const node = await follow(store, connection)
    const acknowledged = await write(writer, 0, 5)
    expect(await node.waitForPosition(acknowledged[4]!, 10_000)).toBe(true)
    // The log comes back without its last two commits; the writer's node goes on (its next batch takes their positions).
    log.loseAfter(acknowledged[2]!)
    const after = await write(writer, 100, 3, 'ETH')
    expect(after[0]).toBe(acknowledged[3])
    await until(() => node.replication().state === 'failed', 'the node notices the log rewrote position 4')
    expect(node.replication().error).toMatchObject({ code: 'PRICE_REPLICA_DIVERGED' })
    expect(node.replication().error?.message).toContain(`at position ${acknowledged[4]}`)
    // It applied nothing past its position: its records are the five batches, none of the new ones.
    expect(store.position).toBe(acknowledged[4])
    expect((await exported(store)).map((record) => record.symbol)).toEqual(Array(10).fill('BTC'))
  })

  it('stops when its connection was lost meanwhile and it follows again', async () => {
    const log = new MemoryLog({ maxMessageBytes: 64 * 1024 })
    const writer = await follow(await openStore(), log.connect())
    const connection = log.connect()
    const store = await openStore()
    const node = await follow(store, connection)
    const acknowledged = await write(writer, 0, 4)
    expect(await node.waitForPosition(acknowledged[3]!, 10_000)).toBe(true)
    connection.setConnected(false)
    await until(() => node.replication().state === 'connecting', 'the node sees its connection down')
    log.loseAfter(acknowledged[1]!)
    await write(writer, 100, 2, 'ETH')
    connection.setConnected(true)
    await until(() => node.replication().state === 'failed', 'the node notices the log rewrote its position')
    expect(node.replication().error).toMatchObject({ code: 'PRICE_REPLICA_DIVERGED' })
    expect(node.replication().error?.message).toContain('now holds commit')
    expect(store.position).toBe(acknowledged[3])
  })

  it('finds, with nothing new to apply, by its probe, that the log lost its newest commit: it stops, sends it again, and goes on once the log holds it there', async () => {
    const log = new MemoryLog({ maxMessageBytes: 64 * 1024 })
    const writer = await follow(await openStore(), log.connect())
    const store = await openStore()
    const failures: unknown[] = []
    const node = await ClusterNode.follow(store, log.connect(), { applyWaitMs: 0, onFailure: (err) => failures.push(err) })
    cleanup.push(() => node.stop())
    const acknowledged = await write(writer, 0, 3)
    expect(await node.waitForPosition(acknowledged[2]!, 10_000)).toBe(true)
    // Only this node holds commit 3 now: the writer's node is gone.
    await writer.stop()
    log.loseAfter(acknowledged[1]!)
    // Nothing else is written: only the node's probe of the stream (every second) can find it.
    await until(() => failures.length === 1, 'a probe noticing the log lost position 3')
    expect(failures[0]).toMatchObject({ code: 'PRICE_REPLICA_DIVERGED', message: expect.stringContaining(`now ends at ${acknowledged[1]}`) })
    await until(() => node.replication().state === 'applying', 'the node sent its commit again and goes on')
    expect(node.replication().resent).toEqual({ commits: 1, records: 2, positions: [acknowledged[2]] })
    expect(log.lastCommit()).toBe(acknowledged[2])
  })

  it('refuses to start on a log that holds a part at its position, after sending the commits the log lost again', async () => {
    const log = new MemoryLog({ maxMessageBytes: 64 * 1024 })
    const writer = await follow(await openStore(), log.connect())
    const db = new MemoryLevel<any, any>()
    const store = await PriceStore.open(db, { provider: TEST_PROVIDER })
    const first = await follow(store, log.connect())
    const acknowledged = await write(writer, 0, 3)
    expect(await first.waitForPosition(acknowledged[2]!, 10_000)).toBe(true)
    cleanup.pop()
    await first.stop()
    await writer.stop()
    log.loseAfter(acknowledged[0]!)
    // New messages take the lost positions: a part where the store applied a commit.
    log.append('part', new Uint8Array([1]), 'a part')
    log.append('part', new Uint8Array([2]), 'another part')
    await expect(ClusterNode.follow(store, log.connect())).rejects.toThrow(/now holds a part of a batch there.*The 2 commits \(4 records\) this node holds that the stream lost were sent to it again/)
    expect(store.position).toBe(acknowledged[2])
    // A log that ends before the store's position, and holds none of its commits: another log; nothing is sent to it.
    const other = new MemoryLog({ maxMessageBytes: 64 * 1024 })
    await follow(await openStore(), other.connect()).then((node) => node.putBatch(batch(500, 1, 'SOL')))
    await expect(ClusterNode.follow(store, other.connect())).rejects.toMatchObject({ code: 'PRICE_REPLICA_DIVERGED', details: { position: acknowledged[2] } })
    expect(other.commitEntries()).toHaveLength(1)
    await store.close()
  })

  it('follows on where the log only trimmed its position away (retention), and where it holds the same commit', async () => {
    const log = new MemoryLog({ maxMessageBytes: 64 * 1024 })
    const writer = await follow(await openStore(), log.connect())
    const store = await openStore()
    const first = await follow(store, log.connect())
    const acknowledged = await write(writer, 0, 3)
    expect(await first.waitForPosition(acknowledged[2]!, 10_000)).toBe(true)
    cleanup.pop()
    await first.stop()
    // The same commit at the position: the node follows again.
    const again = await follow(store, log.connect())
    expect(again.replication().state).toBe('applying')
    cleanup.pop()
    await again.stop()
    // Retention trims the node's own position (nothing after it is gone): nothing to compare, nothing lost.
    log.trimThrough(acknowledged[2]!)
    const node = await follow(store, log.connect())
    const next = await write(writer, 100, 2, 'ETH')
    expect(await node.waitForPosition(next[1]!, 10_000)).toBe(true)
    expect(node.replication().state).toBe('applying')
  })
})
