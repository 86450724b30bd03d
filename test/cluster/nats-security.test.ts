/**
 * A NATS server run with the `authorization` block of docs/cluster.md
 * ("Secure deployment"), read from the page itself so the block the docs
 * show is the block tested: a node's user starts and takes writes on a
 * stream the admin user created (and guarded); a client without
 * credentials cannot connect, so nothing reaches the stream; a node's user
 * cannot purge or delete the stream, delete a message or change the stream;
 * wrong credentials give a coded error that never holds the secret; on a
 * stream without deny_purge, the node's user still cannot purge.
 */
import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream'
import { connect, type NatsConnection } from '@nats-io/transport-node'
import { MemoryLevel } from 'memory-level'
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import { ClusterNode, listSnapshots, publishSnapshot, pruneSnapshots, restoreSnapshot, type ClusterOptions, type NatsAuth, type Snapshot } from '../../src/cluster.js'
import { PriceStore } from '../../src/index.js'
import { TEST_PROVIDER } from '../../src/testing/records.js'
import { NATS_SKIP_REASON, natsServerPath, startNatsCluster, type NatsCluster } from './support/nats-cluster.js'
import { recordSoakRun } from './support/soak-ledger.js'
import { timedBatch } from './support/store-fixtures.js'

/** The block docs/cluster.md shows; its passwords come from the server's environment. */
const AUTHORIZATION = (() => {
  const page = readFileSync(new URL('../../docs/cluster.md', import.meta.url), 'utf8')
  const block = /```\n(authorization \{\n[\s\S]*?\n\})\n```/.exec(page)?.[1]
  if (block === undefined) throw new Error('docs/cluster.md shows no authorization block')
  return block
})()
const PASSWORDS = { NODE_A_PASSWORD: '', NODE_B_PASSWORD: '', NODE_C_PASSWORD: '', ADMIN_PASSWORD: '' }
const STREAM = 'PRICES'
const COMMIT = `price-store.${STREAM}.commit`
const PART = `price-store.${STREAM}.part`

const cleanup: (() => Promise<unknown>)[] = []
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step().catch(() => {})
})

beforeAll(() => {
  // nats-server reads `$NODE_A_PASSWORD` ... from its environment, which it inherits from this process.
  for (const name of Object.keys(PASSWORDS) as (keyof typeof PASSWORDS)[]) {
    // nats-server parses the value as a config value: one starting with a digit would not parse as a string (docs/cluster.md says so).
    PASSWORDS[name] = `pw${randomBytes(16).toString('hex')}`
    process.env[name] = PASSWORDS[name]
  }
})

const nodeA = (): NatsAuth => ({ user: 'node-a', password: PASSWORDS.NODE_A_PASSWORD })
const admin = (): NatsAuth => ({ user: 'price-store-admin', password: PASSWORDS.ADMIN_PASSWORD })

async function securedServer(): Promise<NatsCluster> {
  const nats = await startNatsCluster({ size: 1, name: 'secured', authorization: AUTHORIZATION })
  cleanup.push(() => nats.close())
  return nats
}

async function openStore(): Promise<PriceStore> {
  const store = await PriceStore.open(new MemoryLevel(), { provider: TEST_PROVIDER })
  cleanup.push(() => store.close())
  return store
}

async function startNode(nats: NatsCluster, store: PriceStore, options: Partial<ClusterOptions>): Promise<ClusterNode> {
  const node = await ClusterNode.start(store, { servers: nats.urls, ...options })
  cleanup.push(() => node.stop())
  return node
}

async function manager(nats: NatsCluster, user: string, pass: string): Promise<{ nc: NatsConnection; jsm: JetStreamManager }> {
  const nc = await connect({ servers: [...nats.urls], user, pass })
  cleanup.push(() => nc.close())
  return { nc, jsm: await jetstreamManager(nc) }
}

/** The admin user's node creates the stream and writes one batch through it; then it stops. */
async function seededStream(nats: NatsCluster): Promise<void> {
  const node = await startNode(nats, await openStore(), { auth: admin() })
  await node.putBatch(timedBatch(0, 3))
  await node.stop()
}

/** Where a failed promise's error went, to look at its message and cause. */
async function failure(promise: Promise<unknown>): Promise<Error & { code?: string; details?: { parameter?: string } }> {
  return await promise.then(() => { throw new Error('expected a failure') }, (err: Error) => err)
}

describe.skipIf(natsServerPath() === undefined)(`NATS with the documented authorization block${natsServerPath() === undefined ? ` (${NATS_SKIP_REASON})` : ''}`, () => {
  it('a node user may not create the stream; the admin user creates it after the store position, guarded; a node user then takes writes', async () => {
    const nats = await securedServer()
    const store = await openStore()
    await store.putMany(timedBatch(0, 2))
    await store.putMany(timedBatch(2, 2))
    const refused = await failure(ClusterNode.start(store, { servers: nats.urls, auth: nodeA(), adoptEmptyStream: true }))
    expect(refused).toMatchObject({ code: 'PRICE_LOG_UNAVAILABLE', details: { parameter: 'stream' } })
    expect(refused.message).toMatch(/may not create it/)
    const { nc, jsm } = await manager(nats, 'price-store-admin', PASSWORDS.ADMIN_PASSWORD)
    await expect(jsm.streams.info(STREAM)).rejects.toThrow(/stream not found/)
    expect(store.position).toBe(2)

    await (await startNode(nats, store, { auth: admin(), adoptEmptyStream: true })).stop()
    const created = await jsm.streams.info(STREAM)
    // nats-server 2.9 has no first_seq: a stream started at a position by a purge keeps no deny_purge (jetstream-log.ts).
    const [major = 0, minor = 0] = (nc.info?.version ?? '').split('.').map(Number)
    expect(created.config).toMatchObject({ deny_delete: true, deny_purge: major > 2 || (major === 2 && minor >= 10), subjects: [COMMIT, PART] })
    expect(created.state).toMatchObject({ messages: 0, first_seq: 3 })

    const node = await startNode(nats, store, { auth: nodeA(), nodeId: 'a' })
    expect(await node.putBatch(timedBatch(4, 2))).toEqual({ stored: 2, position: 3 })
    expect(store.position).toBe(3)
    expect((await jsm.streams.info(STREAM)).state).toMatchObject({ messages: 1, first_seq: 3, last_seq: 3 })
    // Two nodes' users report what they applied to each other: a write concern of 2 is met.
    // (A second store with the same two commits before the stream's start, as a backup of the first would be.)
    const other = await openStore()
    await other.putMany(timedBatch(0, 2))
    await other.putMany(timedBatch(2, 2))
    const second = await startNode(nats, other, { auth: { user: 'node-b', password: PASSWORDS.NODE_B_PASSWORD }, nodeId: 'b' })
    // Each direction is shown by a write that waits for the other node: b's reports reach a, then a's reach b.
    const fromA = await node.putBatch(timedBatch(6, 2), { writeConcern: 2 })
    expect(other.position).toBeGreaterThanOrEqual(fromA.position)
    const fromB = await second.putBatch(timedBatch(8, 2), { writeConcern: 2 })
    expect(store.position).toBeGreaterThanOrEqual(fromB.position)
    expect(second.replication().peers?.map((peer) => peer.node)).toContain('a')
    expect(node.replication().peers?.map((peer) => peer.node)).toContain('b')
  })

  it('a client without credentials cannot connect, nor a node without them start: nothing reaches the stream', async () => {
    const nats = await securedServer()
    await seededStream(nats)
    const { jsm } = await manager(nats, 'price-store-admin', PASSWORDS.ADMIN_PASSWORD)
    const before = (await jsm.streams.info(STREAM)).state
    expect(before.messages).toBe(1)

    await expect(connect({ servers: [...nats.urls] })).rejects.toThrow(/Authorization Violation/)
    const err = await failure(ClusterNode.start(await openStore(), { servers: nats.urls }))
    expect(err).toMatchObject({ code: 'PRICE_LOG_UNAVAILABLE', details: { parameter: 'auth' } })
    expect(err.message).toMatch(/NATS refused the credentials/)
    const after = (await jsm.streams.info(STREAM)).state
    recordSoakRun({
      scenario: 'a NATS client without credentials tries to publish, and a node without them to start',
      acknowledged: before.messages, lost: Math.max(0, before.messages - after.messages), phantom: Math.max(0, after.messages - before.messages),
      diverged: after.last_seq === before.last_seq ? 0 : 1, stopped: 0, recoveryMs: 0,
    })
    expect(after).toEqual(before)
  })

  it("a node's own user cannot purge or delete the stream, delete a message or change the stream; the stream refuses purges and deletes to the admin too", async () => {
    const nats = await securedServer()
    await seededStream(nats)
    const { jsm: adminJsm } = await manager(nats, 'price-store-admin', PASSWORDS.ADMIN_PASSWORD)
    const before = await adminJsm.streams.info(STREAM)
    const { jsm } = await manager(nats, 'node-a', PASSWORDS.NODE_A_PASSWORD)
    await expect(jsm.streams.purge(STREAM)).rejects.toThrow(/Permissions Violation for Publish to "\$JS\.API\.STREAM\.PURGE\.PRICES"/)
    await expect(jsm.streams.delete(STREAM)).rejects.toThrow(/Permissions Violation for Publish to "\$JS\.API\.STREAM\.DELETE\.PRICES"/)
    await expect(jsm.streams.deleteMessage(STREAM, 1)).rejects.toThrow(/Permissions Violation for Publish to "\$JS\.API\.STREAM\.MSG\.DELETE\.PRICES"/)
    await expect(jsm.streams.update(STREAM, { max_msgs: 1 })).rejects.toThrow(/Permissions Violation for Publish to "\$JS\.API\.STREAM\.UPDATE\.PRICES"/)
    await expect(jsm.streams.add({ name: 'OTHER', subjects: ['other.>'] })).rejects.toThrow(/Permissions Violation/)
    // deny_purge and deny_delete: the stream itself refuses, whoever asks.
    await expect(adminJsm.streams.purge(STREAM)).rejects.toThrow(/purge not permitted/)
    await expect(adminJsm.streams.deleteMessage(STREAM, 1)).rejects.toThrow(/not permitted/)
    const after = await adminJsm.streams.info(STREAM)
    expect(after.state).toEqual(before.state)
    expect(after.config).toEqual(before.config)
  })

  it('wrong credentials: PRICE_LOG_UNAVAILABLE saying NATS refused them, never the secret; right ones in a URL are used and not printed', async () => {
    const nats = await securedServer()
    await seededStream(nats)
    const secret = `wrong-${randomBytes(8).toString('hex')}`
    const port = new URL(nats.urls[0]!.replace('nats:', 'http:')).port
    // A node waiting for NATS (as `serve` does, without end) does not wait for credentials NATS refused: the same at every try.
    const tries: unknown[] = []
    for (const options of [
      { servers: nats.urls, auth: { user: 'node-a', password: secret }, startTimeoutMs: Number.MAX_SAFE_INTEGER, onError: (err: unknown) => tries.push(err) },
      { servers: nats.urls, auth: { token: secret } },
      { servers: `nats://node-a:${secret}@127.0.0.1:${port}` },
    ]) {
      const err = await failure(ClusterNode.start(await openStore(), options))
      expect(err).toMatchObject({ code: 'PRICE_LOG_UNAVAILABLE', details: { parameter: 'auth' } })
      expect(err.message).toMatch(/NATS refused the credentials/)
      expect(`${err.message} ${String(err.cause)} ${err.stack}`).not.toContain(secret)
    }
    expect(tries).toEqual([])
    const bad = await failure(ClusterNode.start(await openStore(), { servers: `nats://node-a:${secret}@127.0.0.1:${port}/x` }))
    expect(bad).toMatchObject({ code: 'PRICE_INVALID_OPTIONS', details: { parameter: 'servers' } })
    expect(bad.message).not.toContain(secret)

    const store = await openStore()
    const node = await startNode(nats, store, { servers: `nats://node-a:${PASSWORDS.NODE_A_PASSWORD}@127.0.0.1:${port}` })
    expect((await node.putBatch(timedBatch(10, 1))).position).toBe(2)
    expect(store.position).toBe(2)
  })

  it("a stream without deny_delete and deny_purge: a node's user follows it, and still may not purge it or delete a message", async () => {
    const nats = await securedServer()
    const { nc, jsm } = await manager(nats, 'price-store-admin', PASSWORDS.ADMIN_PASSWORD)
    await jsm.streams.add({ name: STREAM, subjects: [COMMIT, PART] })
    // A part alone: the stream holds a message, and nodes apply nothing of it.
    await nc.request(PART, new Uint8Array([1]))
    const before = await jsm.streams.info(STREAM)
    expect(before.config).toMatchObject({ deny_delete: false, deny_purge: false })

    const node = await startNode(nats, await openStore(), { auth: nodeA() })
    expect((await node.putBatch(timedBatch(0, 1))).position).toBe(2)
    const { jsm: nodeJsm } = await manager(nats, 'node-a', PASSWORDS.NODE_A_PASSWORD)
    await expect(nodeJsm.streams.purge(STREAM)).rejects.toThrow(/Permissions Violation/)
    await expect(nodeJsm.streams.deleteMessage(STREAM, 2)).rejects.toThrow(/Permissions Violation/)
    const after = await jsm.streams.info(STREAM)
    expect(after.config).toEqual(before.config)
    expect(after.state).toMatchObject({ messages: 2, first_seq: 1, last_seq: 2 })
  })
  it("a node's user publishes, lists, prunes and restores the stream's snapshots, and still may not purge the stream", async () => {
    const nats = await securedServer()
    await seededStream(nats)
    const store = await openStore()
    await store.putMany(timedBatch(0, 3))
    const node = await startNode(nats, store, { auth: nodeA(), nodeId: 'a' })
    await node.putBatch(timedBatch(100, 2))
    const connection = { servers: nats.urls, auth: nodeA() }
    const published: Snapshot[] = []
    for (let i = 0; i < 3; i++) {
      await node.putBatch(timedBatch(200 + i * 10, 1))
      published.push((await publishSnapshot(store, connection, { stream: STREAM, nodeId: 'a' })).snapshot)
    }
    expect((await listSnapshots(connection, { stream: STREAM })).map((snapshot) => snapshot.name)).toEqual(published.map((snapshot) => snapshot.name).reverse())
    const pruned = await pruneSnapshots(connection, { stream: STREAM, keep: 1 })
    expect(pruned.map((snapshot) => snapshot.name).sort()).toEqual(published.slice(0, 2).map((snapshot) => snapshot.name).sort())
    const [newest] = await listSnapshots(connection, { stream: STREAM })
    expect(newest?.name).toBe(published[2]!.name)
    const dir = await mkdtemp(join(tmpdir(), 'price-store-secured-snapshot-'))
    cleanup.push(() => rm(dir, { recursive: true, force: true }))
    await restoreSnapshot(newest!, join(dir, 'restored'))
    const restored = await PriceStore.open(join(dir, 'restored'), { provider: TEST_PROVIDER })
    cleanup.push(() => restored.close())
    expect(restored.position).toBe(newest!.position)
    const { jsm } = await manager(nats, 'node-a', PASSWORDS.NODE_A_PASSWORD)
    await expect(jsm.streams.purge(STREAM)).rejects.toThrow(/Permissions Violation/)
  })
})
