/**
 * A follower (`HttpFollowLog`) whose primary's history changed under it: the
 * primary went back to an older backup and took other writes at the
 * follower's positions, or is behind it. The follower stops with
 * PRICE_REPLICA_DIVERGED and applies nothing of the other history; a primary
 * that merely restarted with its own database is followed on. In-process
 * servers on loopback; every wait is for an observable state.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { MemoryLevel } from 'memory-level'
import { afterEach, describe, expect, it } from 'vitest'
import { startServer, type RunningServer } from '../../src/adapters/http/node.js'
import { ClusterNode, HttpFollowLog } from '../../src/cluster.js'
import { PriceStore, type PriceRecord } from '../../src/index.js'
import { TEST_PROVIDER } from '../../src/testing/records.js'
import { until } from '../support/http/operations-helpers.js'
import { exportedRecords, timedBatch } from './support/store-fixtures.js'
import { followPrimary, servePrimary } from './support/follow-fixtures.js'

const cleanup: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step()
})

async function opened(location: MemoryLevel | string): Promise<PriceStore> {
  const store = await PriceStore.open(location, { provider: TEST_PROVIDER })
  cleanup.push(async () => {
    if (store.status === 'open') await store.close()
  })
  return store
}

const serve = (store: PriceStore, port = 0): Promise<RunningServer> => servePrimary(cleanup, store, port)

const follow = (store: PriceStore, url: string): Promise<ClusterNode> => followPrimary(cleanup, store, url)

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'follow-history-'))
  cleanup.push(() => rm(dir, { recursive: true, force: true }))
  return dir
}

/**
 * A primary at position 4 (four one-record commits), a backup of it taken at position 2, and a follower that
 * applied all four; the primary's server is then closed and its store too.
 */
async function followedThenStopped(): Promise<{ copy: PriceStore; node: ClusterNode; port: number; backup: string; held: PriceRecord[] }> {
  const primary = await opened(new MemoryLevel())
  await primary.putMany(timedBatch(0, 1))
  await primary.putMany(timedBatch(1, 1))
  const backup = join(await tempDir(), 'backup')
  await primary.backup(backup)
  await primary.putMany(timedBatch(2, 1))
  await primary.putMany(timedBatch(3, 1))
  // Closed here, not by the cleanup.
  const server = await startServer({ store: primary, port: 0 })
  const port = Number(new URL(server.url).port)
  const copy = await opened(new MemoryLevel())
  const node = await follow(copy, server.url)
  expect(await node.waitForPosition(4, 10_000)).toBe(true)
  const held = await exportedRecords(copy)
  await server.close()
  await primary.close()
  await until(() => node.replication().state === 'connecting', 'the follower notices its primary is gone')
  return { copy, node, port, backup, held }
}

describe('a follower whose primary changed its history', () => {
  it('stops with PRICE_REPLICA_DIVERGED when the primary went back to an older backup and took other writes past its position', async () => {
    const { copy, node, port, backup, held } = await followedThenStopped()
    const restored = await opened(backup)
    expect(restored.position).toBe(2)
    for (let i = 0; i < 3; i++) await restored.putMany(timedBatch(100 + i, 1, 'ETH'))
    expect(restored.position).toBe(5)
    await serve(restored, port)
    await until(() => node.replication().state === 'failed', 'the follower stops')
    expect(node.replication().error).toMatchObject({ code: 'PRICE_REPLICA_DIVERGED' })
    expect(node.replication().error?.message).toContain('at position 4')
    // Nothing of the other history was applied.
    expect(copy.position).toBe(4)
    expect(await exportedRecords(copy)).toEqual(held)
  })

  it('stops with PRICE_REPLICA_DIVERGED when the primary came back behind it', async () => {
    const { copy, node, port, backup, held } = await followedThenStopped()
    const restored = await opened(backup)
    await serve(restored, port)
    await until(() => node.replication().state === 'failed', 'the follower stops')
    expect(node.replication().error).toMatchObject({ code: 'PRICE_REPLICA_DIVERGED' })
    expect(node.replication().error?.message).toContain('is at position 2, behind this follower\'s 4')
    // A write that brings the primary past it changes nothing here.
    for (let i = 0; i < 3; i++) await restored.putMany(timedBatch(100 + i, 1, 'ETH'))
    expect(copy.position).toBe(4)
    expect(await exportedRecords(copy)).toEqual(held)
  })

  it('refuses to start on a primary whose commit at its position is another one, and starts on one that holds its own', async () => {
    const { copy, node, port, backup } = await followedThenStopped()
    await node.stop()
    const restored = await opened(backup)
    for (let i = 0; i < 3; i++) await restored.putMany(timedBatch(100 + i, 1, 'ETH'))
    const other = await serve(restored, port)
    await expect(ClusterNode.follow(copy, new HttpFollowLog(other.url, TEST_PROVIDER))).rejects.toMatchObject({
      code: 'PRICE_REPLICA_DIVERGED', details: { position: 4 },
    })
    expect(copy.position).toBe(4)
    // The same store follows a primary holding its history (one seeded from the copy itself), and goes on past it.
    const seed = join(await tempDir(), 'seed')
    await copy.backup(seed)
    const same = await opened(seed)
    await same.putMany(timedBatch(200, 2, 'AR'))
    const sameServer = await serve(same)
    const resumed = await follow(copy, sameServer.url)
    expect(await resumed.waitForPosition(5, 10_000)).toBe(true)
    expect(await exportedRecords(copy)).toEqual(await exportedRecords(same))
  })

  it('follows on, keeping the id of each commit, when its primary restarts with its own database', async () => {
    const dir = join(await tempDir(), 'primary')
    let primary = await opened(dir)
    await primary.putMany(timedBatch(0, 2))
    // Closed here, not by the cleanup.
    const first = await startServer({ store: primary, port: 0 })
    const port = Number(new URL(first.url).port)
    const copy = await opened(new MemoryLevel())
    const node = await follow(copy, first.url)
    expect(await node.waitForPosition(1, 10_000)).toBe(true)
    const id = copy.positionId
    expect(id).toMatch(/^[0-9a-f]{64}$/)
    await first.close()
    await primary.close()
    await until(() => node.replication().state === 'connecting', 'the follower notices its primary is gone')
    primary = await opened(dir)
    await primary.putMany(timedBatch(10, 2))
    await serve(primary, port)
    expect(await node.waitForPosition(2, 15_000)).toBe(true)
    expect(node.replication().state).toBe('applying')
    expect(copy.positionId).toMatch(/^[0-9a-f]{64}$/)
    expect(copy.positionId).not.toBe(id)
    expect(await exportedRecords(copy)).toEqual(await exportedRecords(primary))
  })
})
