/**
 * A real JetStream server that comes back without the messages it acknowledged last (its message
 * files cut back to an earlier length while it is stopped: support/stream-files.ts), under nodes
 * that took those writes with a write concern of 2. Nothing acknowledged is lost:
 * - nothing written meanwhile: the nodes find the loss by their probes, send the lost commits again,
 *   which land at their old positions under their old ids, and go on applying and taking writes;
 * - a writer took the lost positions first (the nodes were down): the nodes, starting again, send
 *   their lost commits as new writes and refuse to start on a store that holds other commits than the
 *   stream at those positions; their stores rebuilt from the stream, they start again; the writer, a
 *   new node and the rebuilt ones hold every acknowledged write.
 * Every outcome is fixed by the order of the steps (a server stopped, files cut, a server started),
 * and every wait is for an observable state.
 */
import { MemoryLevel } from 'memory-level'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ClusterNode, installRebuilt, rebuildFromStream, type ResentCommits } from '../../src/cluster.js'
import { PriceStore, isPriceStoreError } from '../../src/index.js'
import { TEST_PROVIDER, type InputRecord } from '../../src/testing/records.js'
import { until } from '../support/http/operations-helpers.js'
import { NATS_SKIP_REASON, natsServerPath, startNatsCluster, type NatsCluster } from './support/nats-cluster.js'
import { compareExports, recordSoakRun } from './support/soak-ledger.js'
import { blockSizes, cutBlocksTo, messagesDir } from './support/stream-files.js'
import { exportedJson, modelExport, timedBatch } from './support/store-fixtures.js'

let nats: NatsCluster | undefined
const cleanup: (() => Promise<void>)[] = []

beforeAll(async () => {
  if (natsServerPath() !== undefined) nats = await startNatsCluster({ size: 1, name: 'tail-loss' })
}, 60_000)
afterAll(async () => {
  for (const step of cleanup.splice(0).reverse()) await step().catch(() => {})
  await nats?.close()
})

interface Member {
  readonly store: PriceStore
  readonly node: ClusterNode
  readonly resent: ResentCommits[]
}

async function start(stream: string, nodeId: string, db = new MemoryLevel()): Promise<Member> {
  const store = await PriceStore.open(db, { provider: TEST_PROVIDER })
  cleanup.push(() => store.close())
  const resent: ResentCommits[] = []
  const node = await ClusterNode.start(store, { servers: nats!.urls, stream, nodeId, onResent: (r) => resent.push(r) })
  cleanup.push(() => node.stop())
  return { store, node, resent }
}

/** A forked node's store rebuilt from the stream on disk (`rebuildFromStream`, `installRebuilt`), and a node started on it. */
async function rebuildAndStart(stream: string, nodeId: string): Promise<Member> {
  const dir = await mkdtemp(join(tmpdir(), 'price-store-tail-loss-'))
  cleanup.push(() => rm(dir, { recursive: true, force: true }))
  const location = join(dir, nodeId)
  const open = (path: string): Promise<PriceStore> => PriceStore.open(path, { provider: TEST_PROVIDER })
  await rebuildFromStream(location, { open, cluster: { servers: nats!.urls, stream }, fromSnapshots: false })
  expect(await installRebuilt(location)).toBe(true)
  const store = await open(location)
  cleanup.push(() => store.close())
  const node = await ClusterNode.start(store, { servers: nats!.urls, stream, nodeId })
  cleanup.push(() => node.stop())
  return { store, node, resent: [] }
}

/** `count` records of `symbol` from second `from` (about 600 bytes each: 150 of them go as parts). */
const batch = timedBatch
const exportJson = exportedJson
/** What a store given every acknowledged batch holds. */
const modelOf = (batches: readonly (readonly InputRecord[])[]): Promise<string[]> => modelExport(TEST_PROVIDER, batches)

/** Records the run for the soak script: the following nodes' exports against the model. */
async function recordRun(scenario: string, acknowledged: number, expected: readonly string[], following: readonly Member[], recoveryMs: number): Promise<void> {
  let lost = 0
  let phantom = 0
  let diverged = 0
  for (const m of following) {
    const found = compareExports(expected, await exportJson(m.store))
    lost = Math.max(lost, found.lost)
    phantom = Math.max(phantom, found.phantom)
    if (found.lost + found.phantom > 0) diverged++
  }
  // Every node the scenario started follows the stream at its end (it asserts so): none is left stopped.
  recordSoakRun({ scenario, acknowledged, lost, phantom, diverged, stopped: 0, recoveryMs })
}

/**
 * Writes a batch as a client does: sent again (the same batch: taken once) while the node has no connection to the
 * stream, as it may just after the server restarted.
 */
async function write(m: Member, records: readonly InputRecord[], writeConcern: number): Promise<number> {
  for (const deadline = Date.now() + 30_000; ;) {
    try {
      return (await m.node.putBatch(records, { writeConcern })).position
    } catch (err) {
      if (!isPriceStoreError(err, 'PRICE_LOG_UNAVAILABLE') || Date.now() > deadline) throw err
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  }
}

/** Stops the server (it writes everything out), and notes how long its message files of `stream` are. */
async function noteFiles(stream: string): Promise<Map<string, number>> {
  await nats!.kill(0, 'SIGTERM')
  const sizes = await blockSizes(messagesDir(join(nats!.dir, 'n0', 'js'), stream))
  await nats!.start(0)
  return sizes
}

/** Stops the server and cuts its message files of `stream` back to `sizes`: the server starts again without what came after. */
async function loseTail(stream: string, sizes: ReadonlyMap<string, number>): Promise<void> {
  await nats!.kill(0, 'SIGTERM')
  await cutBlocksTo(messagesDir(join(nats!.dir, 'n0', 'js'), stream), sizes)
}

describe.skipIf(natsServerPath() === undefined)(`a JetStream server that loses the messages it acknowledged last${natsServerPath() === undefined ? ` (${NATS_SKIP_REASON})` : ''}`, () => {
  it('nothing written meanwhile: the nodes send what it lost again, at the same positions, and go on taking writes', async () => {
    const stream = 'TAIL_A'
    const a = await start(stream, 'a')
    const b = await start(stream, 'b')
    const acknowledged: InputRecord[][] = []
    for (let i = 0; i < 3; i++) {
      acknowledged.push(batch(i * 1000, 2, 'BTC'))
      await write(a, acknowledged.at(-1)!, 2)
    }
    const kept = await noteFiles(stream)
    const lost: number[] = []
    for (const [i, records] of [batch(10_000, 2, 'ETH'), batch(20_000, 150, 'AR'), batch(30_000, 1, 'SOL')].entries()) {
      lost.push(await write(i === 1 ? b : a, records, 2))
      acknowledged.push(records)
    }
    await loseTail(stream, kept)
    await nats!.start(0)
    const back = Date.now()

    const repaired = (m: Member): boolean => m.node.replication().state === 'applying' && m.store.position === lost[2]
    await until(() => a.resent.length + b.resent.length > 0 && repaired(a) && repaired(b), 'the nodes sent the lost commits again and go on', 60_000)
    // The first node to find the loss sends all three back; the other may find some back already and send the rest.
    const sent = [...a.resent, ...b.resent]
    expect(sent.some((resent) => resent.commits === 3)).toBe(true)
    for (const resent of sent) expect(resent.positions).toEqual(lost.slice(3 - resent.commits))
    const next = batch(40_000, 1, 'DOGE')
    const taken = await write(b, next, 2)
    const recoveryMs = Date.now() - back
    expect(taken).toBeGreaterThan(lost[2]!)
    acknowledged.push(next)
    const expected = await modelOf(acknowledged)
    const newcomer = await start(stream, 'newcomer')
    expect(await newcomer.node.waitForPosition(taken, 30_000)).toBe(true)
    await recordRun('stream lost its tail, nothing written meanwhile', acknowledged.length, expected, [a, b, newcomer], recoveryMs)
    for (const m of [a, b, newcomer]) expect(await exportJson(m.store)).toEqual(expected)
  }, 120_000)

  it('a writer took the lost positions first: the nodes send what it lost as new writes and refuse to start; rebuilt from the stream they start again; every acknowledged write is on every node', async () => {
    const stream = 'TAIL_B'
    const a = await start(stream, 'a')
    const b = await start(stream, 'b')
    const acknowledged: InputRecord[][] = [batch(0, 2, 'BTC')]
    await write(a, acknowledged[0]!, 2)
    const kept = await noteFiles(stream)
    for (const records of [batch(10_000, 2, 'ETH'), batch(20_000, 150, 'AR')]) {
      await write(a, records, 2)
      acknowledged.push(records)
    }
    // The nodes are down while the server comes back without its last commits and another node writes.
    for (const m of [a, b]) await m.node.stop()
    await loseTail(stream, kept)
    await nats!.start(0)
    const back = Date.now()
    const writer = await start(stream, 'writer')
    const meanwhile = batch(50_000, 3, 'SOL')
    await write(writer, meanwhile, 1)
    const recoveryMs = Date.now() - back
    acknowledged.push(meanwhile)

    for (const m of [a, b]) {
      let refused: unknown
      try {
        await ClusterNode.start(m.store, { servers: nats!.urls, stream, nodeId: m === a ? 'a' : 'b' })
      } catch (err) {
        refused = err
      }
      expect(isPriceStoreError(refused, 'PRICE_REPLICA_DIVERGED'), String(refused)).toBe(true)
      expect((refused as Error).message).toMatch(/The 2 commits \(152 records\) this node holds that the stream lost were sent to it again/)
    }
    const expected = await modelOf(acknowledged)
    const newcomer = await start(stream, 'newcomer')
    await until(() => newcomer.node.replication().lag === 0, 'the new node applied the stream', 30_000)
    expect(await writer.node.waitForPosition(newcomer.store.position, 30_000)).toBe(true)
    // a and b forked: their owner replaces each store with one rebuilt from the stream (docs/api.md), and starts again.
    const rebuilt: Member[] = []
    for (const nodeId of ['a', 'b']) rebuilt.push(await rebuildAndStart(stream, nodeId))
    for (const m of rebuilt) expect(await m.node.waitForPosition(newcomer.store.position, 30_000)).toBe(true)
    await recordRun('stream lost its tail, a write took the positions first', acknowledged.length, expected, [writer, newcomer, ...rebuilt], recoveryMs)
    for (const m of [writer, newcomer, ...rebuilt]) expect(await exportJson(m.store)).toEqual(expected)
  }, 120_000)
})
