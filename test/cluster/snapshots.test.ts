/**
 * Snapshots of a store in a NATS Object Store bucket, on one real
 * nats-server: a snapshot published from a store at position P is listed
 * with the metadata the store gives (position, commit id, record count,
 * node, a SHA-256 of the bytes in the bucket, computed here from a download
 * of its own), and restores into a new directory that opens as a store
 * exporting exactly what the source exports. A snapshot whose bytes were
 * changed in the bucket is refused and leaves nothing behind, and so does a
 * restore killed in the middle of its download; pruning keeps
 * the bounded count and always the newest; a stream without snapshots lists
 * none.
 */
import { createHash } from 'node:crypto'
import { mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as delay } from 'node:timers/promises'
import { jetstream, jetstreamManager } from '@nats-io/jetstream'
import { Objm } from '@nats-io/obj'
import { connect, type NatsConnection } from '@nats-io/transport-node'
import { MemoryLevel } from 'memory-level'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { PriceStore } from '../../src/index.js'
import { snapshotBucketName, type Snapshot } from '../../src/cluster/snapshot-names.js'
import { restoreSnapshot } from '../../src/cluster/snapshot-restore.js'
import { listSnapshots, publishSnapshot } from '../../src/cluster/snapshots.js'
import { TEST_PROVIDER } from '../../src/testing/records.js'
import { NATS_SKIP_REASON, natsServerPath, startNatsCluster, type NatsCluster } from './support/nats-cluster.js'
import { exportedJson, rejection, timedBatch } from './support/store-fixtures.js'
import { bundleChild, startChild, type ChildBundle } from '../reliability/child-process.js'
import { startByteLimitedRelay } from './support/byte-limited-relay.js'
import { compareExports, recordSoakRun } from './support/soak-ledger.js'

const cleanup: (() => Promise<void>)[] = []
let nats: NatsCluster | undefined
/** The test's own connection, for reading and damaging the bucket independently of the module. */
let nc: NatsConnection
let scratch: string
let child: ChildBundle | undefined

beforeAll(async () => {
  if (natsServerPath() === undefined) return
  nats = await startNatsCluster({ size: 1, name: 'snapshots' })
  nc = await connect({ servers: [...nats.urls], name: 'snapshots test' })
  scratch = await mkdtemp(join(tmpdir(), 'price-store-snapshots-test-'))
}, 60_000)
afterAll(async () => {
  await child?.cleanup()
  await nc?.close()
  await nats?.close()
  if (scratch !== undefined) await rm(scratch, { recursive: true, force: true })
})
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step().catch(() => {})
})

/** A store holding `batches` batches of 10 records (BTC and ETH in turn), committed at positions 5, 8, 11, ... with ids. */
async function sourceStore(batches: number): Promise<PriceStore> {
  const store = await PriceStore.open(new MemoryLevel(), { provider: TEST_PROVIDER })
  cleanup.push(() => store.close())
  for (let i = 0; i < batches; i++) await appendBatch(store, i)
  return store
}

/** Batch `i` of {@link sourceStore}. */
async function appendBatch(store: PriceStore, i: number): Promise<void> {
  await store.putBatch(timedBatch(i * 10, 10, i % 2 === 0 ? 'BTC' : 'ETH'), { position: 5 + 3 * i, commitId: `commit-${i}` })
}

async function openRestored(location: string): Promise<PriceStore> {
  const store = await PriceStore.open(location, { provider: TEST_PROVIDER })
  cleanup.push(() => store.close())
  return store
}

async function exists(path: string): Promise<boolean> {
  return (await stat(path).catch(() => undefined)) !== undefined
}

/** Whether `dir` holds a file with bytes in it besides the work-in-progress marker. */
async function holdsData(dir: string): Promise<boolean> {
  const names = await readdir(dir).catch(() => [] as string[])
  for (const name of names) {
    if (name !== 'PRICE-STORE-BACKUP-PARTIAL' && ((await stat(join(dir, name)).catch(() => undefined))?.size ?? 0) > 0) return true
  }
  return false
}

/** The object's bytes as the bucket serves them, read with the NATS client alone. */
async function objectBytes(stream: string, name: string): Promise<Uint8Array> {
  const bytes = await (await new Objm(nc).open(snapshotBucketName(stream))).getBlob(name)
  if (bytes === null) throw new Error(`no object ${name}`)
  return bytes
}

/** How many metadata and chunk subjects the bucket's stream holds messages on. */
async function subjectsIn(stream: string): Promise<{ metadata: number; chunks: number }> {
  const bucket = snapshotBucketName(stream)
  const info = await (await jetstreamManager(nc)).streams.info(`OBJ_${bucket}`, { subjects_filter: '>' })
  const subjects = Object.keys(info.state.subjects ?? {})
  return { metadata: subjects.filter((s) => s.startsWith(`$O.${bucket}.M.`)).length, chunks: subjects.filter((s) => s.startsWith(`$O.${bucket}.C.`)).length }
}

const servers = (): readonly string[] => nats?.urls ?? []

describe.skipIf(natsServerPath() === undefined)(`snapshots in a NATS Object Store bucket (${NATS_SKIP_REASON})`, () => {
  it('publishes a store at position P, lists it with its metadata, and restores a store that exports the same records', async () => {
    const store = await sourceStore(4)
    const expectedExport = await exportedJson(store)
    const before = Date.now()
    const { snapshot, pruned } = await publishSnapshot(store, { servers: servers() }, { stream: 'ONE', nodeId: 'node-a' })
    const after = Date.now()

    expect(pruned).toEqual([])
    // Batch 3 was committed at 5 + 3 * 3 with the id commit-3; 4 batches of 10 records.
    expect(snapshot).toMatchObject({ stream: 'ONE', bucket: 'price-store-ONE-snapshots', position: 14, positionId: 'commit-3', records: 40, nodeId: 'node-a', provider: TEST_PROVIDER.id })
    expect(snapshot.records).toBe(expectedExport.length)
    expect(snapshot.createdAt).toBeGreaterThanOrEqual(before)
    expect(snapshot.createdAt).toBeLessThanOrEqual(after)
    const bytes = await objectBytes('ONE', snapshot.name)
    expect(snapshot.sha256).toBe(createHash('sha256').update(bytes).digest('hex'))
    expect(snapshot.bytes).toBe(bytes.length)

    const listed = await listSnapshots({ servers: servers() }, { stream: 'ONE' })
    expect(listed).toEqual([snapshot])

    const dir = join(scratch, 'one')
    const restored = await restoreSnapshot(listed[0]!, dir)
    expect(restored.location).toBe(dir)
    expect(await exists(`${dir}.partial`)).toBe(false)
    const copy = await openRestored(dir)
    expect(await exportedJson(copy)).toEqual(expectedExport)
    expect(copy.position).toBe(14)
    expect(copy.positionId).toBe('commit-3')
  })

  it('restores a snapshot read as JSON when given where to fetch it, over a connection the caller holds', async () => {
    const store = await sourceStore(2)
    const { snapshot } = await publishSnapshot(store, nc, { stream: 'JSON', nodeId: 'node-b' })
    const described = JSON.parse(JSON.stringify(snapshot)) as Snapshot
    expect(await rejection(restoreSnapshot(described, join(scratch, 'json-refused')))).toMatchObject({ code: 'PRICE_INVALID_OPTIONS', details: { parameter: 'snapshot' } })
    const dir = join(scratch, 'json')
    await restoreSnapshot(described, dir, { connection: nc })
    expect(await exportedJson(await openRestored(dir))).toEqual(await exportedJson(store))
    expect(nc.isClosed()).toBe(false)
  })

  it('refuses a snapshot whose bytes in the bucket differ from its digest, leaving nothing at dir', async () => {
    const store = await sourceStore(3)
    const { snapshot } = await publishSnapshot(store, nc, { stream: 'DAMAGED', nodeId: 'node-a' })
    // The object replaced under the same name and metadata by bytes with one changed in the middle (inside a file).
    const bucket = await new Objm(nc).open(snapshotBucketName('DAMAGED'))
    const bytes = await objectBytes('DAMAGED', snapshot.name)
    bytes[Math.floor(bytes.length / 2)]! ^= 0xff
    const info = await bucket.info(snapshot.name)
    await bucket.putBlob({ name: snapshot.name, metadata: info!.metadata! }, bytes)
    const [listed] = await listSnapshots(nc, { stream: 'DAMAGED' })
    expect(listed).toEqual(snapshot)

    const dir = join(scratch, 'damaged')
    const err = await rejection(restoreSnapshot(listed!, dir))
    expect(err).toMatchObject({ code: 'PRICE_CORRUPT_VALUE' })
    expect(String((err as Error).message)).toContain('SHA-256')
    expect(await exists(dir)).toBe(false)
    expect(await exists(`${dir}.partial`)).toBe(false)
  })

  it('refuses a snapshot with a piece added in the bucket, leaving nothing at dir', async () => {
    const store = await sourceStore(3)
    const { snapshot } = await publishSnapshot(store, nc, { stream: 'GROWN', nodeId: 'node-a' })
    const info = await (await new Objm(nc).open(snapshotBucketName('GROWN'))).info(snapshot.name)
    await jetstream(nc).publish(`$O.${snapshotBucketName('GROWN')}.C.${info!.nuid}`, new Uint8Array([1, 2, 3]))

    const dir = join(scratch, 'grown')
    expect(await rejection(restoreSnapshot(snapshot, dir))).toMatchObject({ code: 'PRICE_CORRUPT_VALUE' })
    expect(await exists(dir)).toBe(false)
    expect(await exists(`${dir}.partial`)).toBe(false)
  })

  it('clears what a killed restore left in DIR.partial, and refuses a dir that is not empty', async () => {
    const store = await sourceStore(1)
    const { snapshot } = await publishSnapshot(store, nc, { stream: 'LEFTOVER', nodeId: 'node-a' })
    const full = join(scratch, 'full')
    await mkdir(full)
    await writeFile(join(full, 'x'), 'x')
    expect(await rejection(restoreSnapshot(snapshot, full))).toMatchObject({ code: 'PRICE_INVALID_OPTIONS', details: { parameter: 'dir' } })

    const dir = join(scratch, 'leftover')
    await mkdir(`${dir}.partial`)
    await writeFile(join(`${dir}.partial`, 'PRICE-STORE-BACKUP-PARTIAL'), '')
    await writeFile(join(`${dir}.partial`, '000001.ldb'), 'half a file')
    await restoreSnapshot(snapshot, dir)
    expect(await exists(`${dir}.partial`)).toBe(false)
    expect(await readdir(dir)).not.toContain('PRICE-STORE-BACKUP-PARTIAL')
    expect(await exportedJson(await openRestored(dir))).toEqual(await exportedJson(store))
  })

  it('leaves no dir when the process restoring is killed in the middle of the download; the next restore clears what it left', async () => {
    const store = await PriceStore.open(new MemoryLevel(), { provider: TEST_PROVIDER })
    cleanup.push(() => store.close())
    for (let i = 0; i < 10; i++) await store.putMany(timedBatch(i * 1000, 1000, ['BTC', 'ETH', 'SOL'][i % 3]))
    const { snapshot } = await publishSnapshot(store, nc, { stream: 'KILLED', nodeId: 'node-a' })
    expect(snapshot.bytes).toBeGreaterThan(1_000_000)
    // The child's connection gets half the object's size from the server, then nothing: it can never finish.
    const relay = await startByteLimitedRelay(Number(new URL(servers()[0]!).port), Math.floor(snapshot.bytes / 2))
    cleanup.push(() => relay.close())
    child ??= await bundleChild('../cluster/support/restore-child.ts')
    const dir = join(scratch, 'killed')
    const running = startChild(child, [JSON.stringify(snapshot), dir, relay.url])
    cleanup.push(async () => running.kill())
    // Killed once part of the store is written, as observed on the disk.
    const deadline = Date.now() + 45_000
    while (!(await holdsData(`${dir}.partial`))) {
      if (running.child.exitCode !== null || Date.now() > deadline) throw new Error(`the child wrote nothing (${running.stderr()})`)
      await delay(20)
    }
    running.kill()
    const killedAt = Date.now()
    expect(await running.ended).toBe('SIGKILL')
    expect(await exists(dir)).toBe(false)
    expect(await readdir(`${dir}.partial`)).toContain('PRICE-STORE-BACKUP-PARTIAL')

    await restoreSnapshot(snapshot, dir)
    const restored = await exportedJson(await openRestored(dir))
    const expected = await exportedJson(store)
    const found = compareExports(expected, restored)
    recordSoakRun({
      scenario: 'a process killed (SIGKILL) while it restores a snapshot, then restoring again',
      acknowledged: 10, ...found, diverged: found.lost + found.phantom > 0 ? 1 : 0, stopped: 0, recoveryMs: Date.now() - killedAt,
    })
    expect(await exists(`${dir}.partial`)).toBe(false)
    expect(restored).toEqual(expected)
  })

  it('keeps at most `keep` snapshots, the newest always, and none older than maxAgeMs but the newest', async () => {
    const store = await sourceStore(1)
    const published: Snapshot[] = []
    const prunedAll: Snapshot[] = []
    for (let i = 1; i <= 4; i++) {
      await appendBatch(store, i)
      const { snapshot, pruned } = await publishSnapshot(store, nc, { stream: 'PRUNED', nodeId: 'node-a', keep: 2 })
      published.push(snapshot)
      prunedAll.push(...pruned)
    }
    expect(published.map((s) => s.position)).toEqual([8, 11, 14, 17])
    expect(prunedAll.map((s) => s.position)).toEqual([8, 11])
    expect((await listSnapshots(nc, { stream: 'PRUNED' })).map((s) => s.position)).toEqual([17, 14])
    // Nothing of the removed ones is left in the bucket's stream: for each snapshot kept, its metadata and its chunks.
    expect(await subjectsIn('PRUNED')).toEqual({ metadata: 2, chunks: 2 })

    // Older than 1 ms once the next publish prunes: wait until the clock shows it, then publish once more.
    const newest = published[3]!
    while (Date.now() < newest.createdAt + 2) await delay(1)
    await appendBatch(store, 5)
    const { snapshot, pruned } = await publishSnapshot(store, nc, { stream: 'PRUNED', nodeId: 'node-a', keep: 10, maxAgeMs: 1 })
    expect(pruned.map((s) => s.position)).toEqual([17, 14])
    expect(await listSnapshots(nc, { stream: 'PRUNED' })).toEqual([snapshot])
    expect(await subjectsIn('PRUNED')).toEqual({ metadata: 1, chunks: 1 })
  })

  it('lists nothing for a stream without a bucket, an empty bucket, or a bucket of other objects', async () => {
    expect(await listSnapshots({ servers: servers() }, { stream: 'NEVER' })).toEqual([])
    const bucket = await new Objm(nc).create(snapshotBucketName('EMPTY'))
    expect(await listSnapshots(nc, { stream: 'EMPTY' })).toEqual([])
    await bucket.putBlob({ name: 'README' }, new TextEncoder().encode('not a snapshot'))
    await bucket.putBlob({ name: '0000000000000001-000000000000001-node', metadata: { 'price-store-format': '1' } }, new Uint8Array(1))
    expect(await listSnapshots(nc, { stream: 'EMPTY' })).toEqual([])
  })
})
