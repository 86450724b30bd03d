/**
 * A store that forked from its stream is rebuilt from the stream and put in its place, losing
 * nothing: the stream holds every record the forked store held (it sent the ones the stream lost
 * again) and every record written meanwhile.
 * - `installRebuilt` finishes, at a start, whatever a killed rebuild left, from each state a kill
 *   can leave the directories in (plain directories: no NATS);
 * - on a real nats-server 2.9.10 that comes back without its newest acknowledged messages (its
 *   message files cut while it is stopped: support/stream-files.ts) while another node writes at
 *   their positions: the forked store is refused at start as forked, rebuilt, put in place, and
 *   then holds exactly every acknowledged write and follows the stream again;
 * - a stream that no longer holds its first commits cannot rebuild a store: refused, nothing moved.
 * Every outcome follows from the order of the steps; every wait is for an observable state.
 */
import { MemoryLevel } from 'memory-level'
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ClusterNode, publishSnapshot } from '../../src/cluster.js'
import { REBUILD_PARTIAL_MARKER, installRebuilt, isForkedFromStream, rebuildFromStream, rebuildPathOf } from '../../src/cluster/rebuild.js'
import { PriceStore, isPriceStoreError } from '../../src/index.js'
import { TEST_PROVIDER, type InputRecord } from '../../src/testing/records.js'
import { streamFirstSequence } from './support/stream-first.js'
import { NATS_SKIP_REASON, natsServerPath, startNatsCluster, type NatsCluster } from './support/nats-cluster.js'
import { blockSizes, cutBlocksTo, messagesDir } from './support/stream-files.js'
import { exportedJson, modelExport, rejection, timedBatch } from './support/store-fixtures.js'

let dir: string
let nats: NatsCluster | undefined
const cleanup: (() => Promise<void>)[] = []

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'price-store-rebuild-'))
  if (natsServerPath() !== undefined) nats = await startNatsCluster({ size: 1, name: 'rebuild' })
}, 60_000)
afterAll(async () => {
  for (const step of cleanup.splice(0).reverse()) await step().catch(() => {})
  await nats?.close()
  await rm(dir, { recursive: true, force: true })
})

/** `P.tag` of every commit of `store` up to `head`, oldest first, from its watch items. */
async function portablePositions(store: PriceStore, head: number): Promise<string[]> {
  const named: string[] = []
  const watch = store.watch({ after: 0 })
  for await (const item of watch) {
    if (item.commitTag !== undefined) named.push(`${item.position}.${item.commitTag}`)
    if (item.position >= head) break
  }
  return named
}

/** A directory holding one file naming what it is, to tell directories apart after renames. */
async function labelled(path: string, label: string, partial = false): Promise<void> {
  await mkdir(path, { recursive: true })
  await writeFile(join(path, 'LABEL'), label)
  if (partial) await writeFile(join(path, REBUILD_PARTIAL_MARKER), '')
}

const labelOf = (path: string): Promise<string | undefined> => readFile(join(path, 'LABEL'), 'utf8').catch(() => undefined)

describe('installRebuilt, at a start after a rebuild was killed at any step', () => {
  it('does nothing when no rebuild is beside the store', async () => {
    const location = join(dir, 'none', 'db')
    await labelled(location, 'old')
    expect(await installRebuilt(location)).toBe(false)
    expect(await labelOf(location)).toBe('old')
  })

  it('removes a rebuild that did not finish, and leaves the store', async () => {
    const location = join(dir, 'partial', 'db')
    await labelled(location, 'old')
    await labelled(rebuildPathOf(location), 'new', true)
    expect(await installRebuilt(location)).toBe(false)
    expect(await labelOf(location)).toBe('old')
    expect(await readdir(join(dir, 'partial'))).toEqual(['db'])
  })

  it('puts a finished rebuild in place of the store, and removes the old one', async () => {
    const location = join(dir, 'finished', 'db')
    await labelled(location, 'old')
    await labelled(rebuildPathOf(location), 'new')
    expect(await installRebuilt(location)).toBe(true)
    expect(await labelOf(location)).toBe('new')
    expect(await readdir(join(dir, 'finished'))).toEqual(['db'])
  })

  it('finishes a swap cut between its two renames (the store already aside)', async () => {
    const location = join(dir, 'between', 'db')
    await labelled(`${location}.forked`, 'old')
    await labelled(rebuildPathOf(location), 'new')
    expect(await installRebuilt(location)).toBe(true)
    expect(await labelOf(location)).toBe('new')
    expect(await readdir(join(dir, 'between'))).toEqual(['db'])
  })

  it('removes the old store a finished swap left aside', async () => {
    const location = join(dir, 'aside', 'db')
    await labelled(location, 'new')
    await labelled(`${location}.forked`, 'old')
    expect(await installRebuilt(location)).toBe(false)
    expect(await labelOf(location)).toBe('new')
    expect(await readdir(join(dir, 'aside'))).toEqual(['db'])
  })
})

const openAt = async (path: string): Promise<PriceStore> => {
  await mkdir(path, { recursive: true })
  return PriceStore.open(path, { provider: TEST_PROVIDER })
}

/** Writes a batch through the node, sent again while the node has no connection yet (just after the server restarted). */
async function write(node: ClusterNode, records: readonly InputRecord[]): Promise<number> {
  for (const deadline = Date.now() + 30_000; ;) {
    try {
      return (await node.putBatch(records)).position
    } catch (err) {
      if (!isPriceStoreError(err, 'PRICE_LOG_UNAVAILABLE') || Date.now() > deadline) throw err
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  }
}

async function memoryNode(stream: string, nodeId: string, extra: { maxBytes?: number } = {}): Promise<{ store: PriceStore; node: ClusterNode }> {
  const store = await PriceStore.open(new MemoryLevel(), { provider: TEST_PROVIDER })
  cleanup.push(() => store.close())
  const node = await ClusterNode.start(store, { servers: nats!.urls, stream, nodeId, ...extra })
  cleanup.push(() => node.stop())
  return { store, node }
}

describe.skipIf(natsServerPath() === undefined)(`a store rebuilt from a real stream${natsServerPath() === undefined ? ` (${NATS_SKIP_REASON})` : ''}`, () => {
  it('a store that forked while its node was down is refused as forked, rebuilt from the stream, and then holds every acknowledged write', async () => {
    const stream = 'REBUILD_FORK'
    const location = join(dir, 'fork', 'db')
    const cluster = { servers: nats!.urls, stream, nodeId: 'a' }
    let store = await openAt(location)
    const node = await ClusterNode.start(store, cluster)
    const acknowledged: InputRecord[][] = [timedBatch(0, 2, 'BTC')]
    await write(node, acknowledged[0]!)
    // The server stops (writing everything out) so that its files' lengths at this point are known.
    await nats!.kill(0, 'SIGTERM')
    const kept = await blockSizes(messagesDir(join(nats!.dir, 'n0', 'js'), stream))
    await nats!.start(0)
    for (const records of [timedBatch(10_000, 2, 'ETH'), timedBatch(20_000, 150, 'AR')]) {
      await write(node, records)
      acknowledged.push(records)
    }
    const forkedAt = store.position
    // The portable positions a client of this node holds: each commit's position and tag.
    const named = await portablePositions(store, forkedAt)
    await node.stop()
    // The server comes back without the last two commits, and another node writes at their positions.
    await nats!.kill(0, 'SIGTERM')
    await cutBlocksTo(messagesDir(join(nats!.dir, 'n0', 'js'), stream), kept)
    await nats!.start(0)
    const writer = await memoryNode(stream, 'writer')
    const meanwhile = timedBatch(50_000, 3, 'SOL')
    const taken = await write(writer.node, meanwhile)
    expect(taken).toBeLessThanOrEqual(forkedAt) // a position the forked store holds another commit at
    acknowledged.push(meanwhile)

    const refused = await rejection(ClusterNode.start(store, cluster))
    expect(isForkedFromStream(refused), String(refused)).toBe(true)
    expect((refused as Error).message).toMatch(/The 2 commits \(152 records\) this node holds that the stream lost were sent to it again/)
    const progress: number[] = []
    const built = await rebuildFromStream(location, { open: openAt, cluster, onProgress: ({ position }) => progress.push(position) })
    // The store being replaced is untouched until it is closed and the rebuild installed.
    expect(store.position).toBe(forkedAt)
    await store.close()
    expect(await installRebuilt(location)).toBe(true)
    expect(await readdir(join(dir, 'fork'))).toEqual(['db'])

    store = await openAt(location)
    cleanup.push(() => store.close())
    expect(store.position).toBe(built.position)
    const expected = await modelExport(TEST_PROVIDER, acknowledged)
    expect(await exportedJson(store)).toEqual(expected)
    expect(await exportedJson(writer.store)).toEqual(expected)
    expect(progress.at(-1)).toBe(built.position)
    // A client resuming with a portable position: after the first commit, which the stream kept, it goes on with no
    // reset; after a commit the stream lost, it is told `forked`, whether the rebuilt store holds another commit at
    // that position (the writer's, written meanwhile) or none (a position inside a commit of several parts).
    expect(named.map((at) => Number(at.split('.')[0]))).toEqual([1, taken, forkedAt])
    const [first, other, none] = named
    expect((await store.watch({ after: first! }).next()).value).toMatchObject({ type: 'records', position: taken })
    for (const [after, requested] of [[other!, taken], [none!, forkedAt]] as const) {
      const forked = await store.watch({ after }).next()
      expect(forked.value).toMatchObject({ type: 'reset', reason: 'forked', requested, position: store.position })
    }
    // It follows the stream again, and takes writes.
    const again = await ClusterNode.start(store, cluster)
    cleanup.push(() => again.stop())
    const next = timedBatch(60_000, 1, 'DOGE')
    expect(await write(again, next)).toBeGreaterThan(built.position)
    expect(await writer.node.waitForPosition(store.position, 30_000)).toBe(true)
    expect(await exportedJson(writer.store)).toEqual(await modelExport(TEST_PROVIDER, [...acknowledged, next]))
  }, 120_000)

  it('a stream its retention trimmed rebuilds a store from the newest snapshot it follows on from, passing over one of another history', async () => {
    const stream = 'REBUILD_SNAPSHOT'
    const location = join(dir, 'snapshot', 'db')
    const connection = { servers: nats!.urls }
    // A node of another stream, whose snapshot names this stream: its commit ids are not this stream's.
    const stranger = await memoryNode('REBUILD_STRANGER', 'stranger')
    for (let i = 0; i < 20; i++) await write(stranger.node, timedBatch(500_000 + i, 1, 'XRP'))
    const writer = await memoryNode(stream, 'writer', { maxBytes: 64 * 1024 })
    // About 20 KB a batch: the stream keeps the newest three or so, and no longer holds its first commits.
    for (let i = 0; i < 12; i++) await write(writer.node, timedBatch(i * 20, 20, 'ETH'))
    const usable = (await publishSnapshot(writer.store, connection, { stream, nodeId: 'writer' })).snapshot
    await write(writer.node, timedBatch(1_000, 20, 'AR'))
    const first = await streamFirstSequence(nats!.urls, stream)
    expect(first).toBeGreaterThan(1)
    expect(first).toBeLessThanOrEqual(usable.position) // the stream still holds the snapshot's commit, and all after it
    const foreign = (await publishSnapshot(stranger.store, connection, { stream, nodeId: 'stranger' })).snapshot
    expect(foreign.position).toBeGreaterThan(usable.position) // the newest, so it is tried first
    const skipped: string[] = []
    const built = await rebuildFromStream(location, { open: openAt, cluster: { servers: nats!.urls, stream }, onSnapshotSkipped: (snapshot) => skipped.push(snapshot.name) })
    expect(skipped).toEqual([foreign.name])
    expect(built.snapshot?.name).toBe(usable.name)
    expect(built.position).toBe(writer.store.position)
    expect(await installRebuilt(location)).toBe(true)
    const store = await openAt(location)
    cleanup.push(() => store.close())
    expect(await exportedJson(store)).toEqual(await exportedJson(writer.store))
    // Without the snapshots, the trimmed stream alone cannot rebuild it.
    const refused = await rejection(rebuildFromStream(join(dir, 'snapshot', 'other'), { open: openAt, cluster: { servers: nats!.urls, stream }, fromSnapshots: false }))
    expect(isPriceStoreError(refused, 'PRICE_REPLICA_DIVERGED'), String(refused)).toBe(true)
  }, 120_000)

  it('a stream that no longer holds its first commit cannot rebuild a store: refused, and the store is left as it was', async () => {
    const stream = 'REBUILD_TRIMMED'
    const location = join(dir, 'trimmed', 'db')
    // A store with commits of its own starts a new stream after its position: the stream has no commit 1.
    const store = await openAt(location)
    await store.putMany(timedBatch(0, 2))
    const node = await ClusterNode.start(store, { servers: nats!.urls, stream, adoptEmptyStream: true })
    await node.stop()
    await store.close()
    const refused = await rejection(rebuildFromStream(location, { open: openAt, cluster: { servers: nats!.urls, stream } }))
    expect(isPriceStoreError(refused, 'PRICE_REPLICA_DIVERGED'), String(refused)).toBe(true)
    expect(await installRebuilt(location)).toBe(false)
    expect(await readdir(join(dir, 'trimmed'))).toEqual(['db'])
    const reopened = await openAt(location)
    expect(reopened.position).toBe(1)
    await reopened.close()
  }, 60_000)
})
