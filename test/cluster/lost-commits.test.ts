/**
 * A stream that loses the commits it acknowledged last (as nats-server
 * 2.9.10 can when every server stops at once) does not lose the writes a
 * node holds: the nodes that applied them stop (they hold other records
 * than the stream at those positions) and send their records to the stream
 * again, so every node that follows the stream, and a new one, ends with
 * every write ever acknowledged, and no record that no writer sent. On the
 * in-memory log, which loses its tail on demand (`loseAfter`) and gives the
 * positions to the next appends. Waits are for observable states.
 */
import { MemoryLevel } from 'memory-level'
import { afterEach, describe, expect, it } from 'vitest'
import { ClusterNode, type ResentCommits } from '../../src/cluster.js'
import { PriceStore, isPriceStoreError, type PriceStoreError } from '../../src/index.js'
import { TEST_PROVIDER, type InputRecord } from '../../src/testing/records.js'
import { until } from '../support/http/operations-helpers.js'
import { MemoryLog, type MemoryLogConnection } from './support/memory-log.js'
import { exportedJson, modelExport, timedBatch } from './support/store-fixtures.js'

const cleanup: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step()
})

async function openStore(db = new MemoryLevel()): Promise<PriceStore> {
  const store = await PriceStore.open(db, { provider: TEST_PROVIDER })
  cleanup.push(() => store.close())
  return store
}

interface Member {
  readonly store: PriceStore
  readonly node: ClusterNode
  readonly conn: MemoryLogConnection
  readonly resent: ResentCommits[]
  /** What `onForked` was called with. */
  readonly forked: ResentCommits[]
}

async function member(log: MemoryLog, nodeId: string, store?: PriceStore): Promise<Member> {
  const opened = store ?? await openStore()
  const resent: ResentCommits[] = []
  const forked: ResentCommits[] = []
  const conn = log.connect()
  const node = await ClusterNode.follow(opened, conn, { nodeId, onResent: (r) => resent.push(r), onForked: (f) => forked.push(f) })
  cleanup.push(() => node.stop())
  return { store: opened, node, conn, resent, forked }
}

const batch = timedBatch
const exportJson = exportedJson
/** The model: a store given every acknowledged batch (records are keyed, and no two batches share a key here). */
const modelOf = (batches: readonly (readonly InputRecord[])[]): Promise<string[]> => modelExport(TEST_PROVIDER, batches)

/** A node started on an empty store, following the log from its start, once it applied the log's newest commit. */
async function newcomer(log: MemoryLog): Promise<Member> {
  const joined = await member(log, 'newcomer')
  expect(await joined.node.waitForPosition(log.lastCommit(), 10_000)).toBe(true)
  return joined
}

describe('when the stream loses commits a node holds', () => {
  it('the nodes that hold them send them again, so every acknowledged write is in the stream, with the new ones written meanwhile', async () => {
    const log = new MemoryLog({ maxMessageBytes: 4_096 })
    const a = await member(log, 'a')
    const b = await member(log, 'b')
    const acknowledged: InputRecord[][] = []
    const positions: number[] = []
    for (let i = 0; i < 5; i++) {
      const records = batch(i * 100, i === 3 ? 20 : 2, i % 2 === 0 ? 'BTC' : 'ETH') // the fourth as parts
      positions.push((await a.node.putBatch(records, { writeConcern: 2 })).position)
      acknowledged.push(records)
    }
    // The stream comes back without its last three commits; a writer that did not hold them writes at their positions.
    log.loseAfter(positions[1]!)
    const writer = await member(log, 'writer', await openStore())
    const meanwhile = batch(10_000, 3, 'AR')
    const taken = await writer.node.putBatch(meanwhile, { writeConcern: 0 })
    expect(taken.position).toBe(positions[1]! + 1) // a position a and b hold another commit at
    acknowledged.push(meanwhile)

    for (const held of [a, b]) {
      await until(() => held.forked.length === 1, 'the node sent what the stream lost, and found its history forked')
      expect(held.node.replication()).toMatchObject({ state: 'failed', forked: true, error: { code: 'PRICE_REPLICA_DIVERGED' } })
      expect(held.resent[0]).toMatchObject({ commits: 3, records: 2 + 20 + 2 })
      expect(held.node.replication().resent).toEqual(held.resent[0])
      await expect(held.node.putBatch(batch(50_000, 1))).rejects.toMatchObject({ code: 'PRICE_REPLICA_FAILED' })
    }
    // Each lost batch is in the stream once more (the second node's sends were recognised as the first's).
    expect(b.resent[0]!.positions).toEqual(a.resent[0]!.positions)
    const expected = await modelOf(acknowledged)
    expect(await exportJson((await newcomer(log)).store)).toEqual(expected)
    expect(await writer.node.waitForPosition(log.lastCommit(), 10_000)).toBe(true)
    expect(await exportJson(writer.store)).toEqual(expected)
  })

  it('with nothing written meanwhile, they land where the nodes have them: the nodes go on applying, and take writes', async () => {
    const log = new MemoryLog({ maxMessageBytes: 4_096 })
    const a = await member(log, 'a')
    const b = await member(log, 'b')
    const kept = batch(0, 2)
    const lost = [batch(100, 2, 'ETH'), batch(200, 20, 'AR')] // the second as parts
    const first = await a.node.putBatch(kept, { writeConcern: 2 })
    const held: number[] = []
    for (const each of lost) held.push((await a.node.putBatch(each, { writeConcern: 2 })).position)
    log.loseAfter(first.position)
    // Only the nodes' probes can find it: the stream ends before them. The first to find it sends the commits back;
    // the other may find them back already (then it never stops).
    const repaired = (): boolean => log.lastCommit() === held[1] && [a, b].every((m) => m.node.replication().state === 'applying')
    await until(() => a.resent.length + b.resent.length > 0 && repaired(), 'a node sent the commits again and both go on', 15_000)
    expect([...a.forked, ...b.forked]).toEqual([])
    for (const resent of [...a.resent, ...b.resent]) expect(resent.positions).toEqual(held.slice(2 - resent.commits))
    expect([...a.resent, ...b.resent].some((resent) => resent.commits === 2 && resent.records === 22)).toBe(true)
    expect([a.store.position, b.store.position]).toEqual([held[1], held[1]])
    expect(log.commitEntries()).toHaveLength(3) // the same positions, under the same ids: once each
    const next = await b.node.putBatch(batch(300, 1, 'SOL'), { writeConcern: 2 })
    expect(a.store.position).toBeGreaterThanOrEqual(next.position)
    expect(await exportJson((await newcomer(log)).store)).toEqual(await modelOf([kept, ...lost, batch(300, 1, 'SOL')]))
  })

  it('a node whose connection comes back holds writes back until the stream has what the other nodes hold: no position is taken twice', async () => {
    const log = new MemoryLog({ maxMessageBytes: 4_096 })
    const a = await member(log, 'a')
    const b = await member(log, 'b')
    const first = batch(0, 2)
    const kept = await a.node.putBatch(first, { writeConcern: 2 })
    // b is cut off; a takes two more writes, which the stream then loses.
    b.conn.setConnected(false)
    const lost = [batch(100, 2, 'ETH'), batch(200, 2, 'AR')]
    const held: number[] = []
    for (const each of lost) held.push((await a.node.putBatch(each)).position)
    log.loseAfter(kept.position)
    b.conn.setConnected(true)
    // A client writes through b at once, and retries while b holds it back.
    const late = batch(300, 1, 'SOL')
    const refusals: string[] = []
    let written: number | undefined
    for (const deadline = Date.now() + 20_000; written === undefined && Date.now() < deadline;) {
      try {
        written = (await b.node.putBatch(late)).position
      } catch (err) {
        expect(isPriceStoreError(err, 'PRICE_LOG_UNAVAILABLE'), String(err)).toBe(true)
        refusals.push((err as Error).message)
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
    }
    expect(refusals.length).toBeGreaterThan(0)
    expect(refusals[0]).toMatch(/waits .* to hear from a|the stream lost commits/)
    expect(written).toBeGreaterThan(held[1]!)
    await until(() => a.node.replication().state === 'applying' && a.store.position >= written!, 'a applies the write after its own, sent again')
    expect(await exportJson((await newcomer(log)).store)).toEqual(await modelOf([first, ...lost, late]))
  })

  it('a node that starts on a store holding commits the stream lost sends them again, and starts when they land where it has them', async () => {
    const log = new MemoryLog({ maxMessageBytes: 4_096 })
    const db = new MemoryLevel()
    const store = await PriceStore.open(db, { provider: TEST_PROVIDER })
    const node = await ClusterNode.follow(store, log.connect(), { nodeId: 'a' })
    const kept = batch(0, 1)
    const lost = batch(100, 1, 'ETH')
    const first = await node.putBatch(kept)
    const second = await node.putBatch(lost)
    await node.stop()
    await store.close()
    log.loseAfter(first.position)
    const again = await member(log, 'a', await openStore(db))
    expect(again.resent).toEqual([{ commits: 1, records: 1, positions: [second.position] }])
    expect(again.node.replication().state).toBe('applying')
    expect(await exportJson((await newcomer(log)).store)).toEqual(await modelOf([kept, lost]))
  })

  it('a node that starts on a store holding commits the stream lost, whose positions were taken, sends them before it refuses to start', async () => {
    const log = new MemoryLog({ maxMessageBytes: 4_096 })
    const db = new MemoryLevel()
    const store = await PriceStore.open(db, { provider: TEST_PROVIDER })
    const node = await ClusterNode.follow(store, log.connect(), { nodeId: 'a' })
    const kept = batch(0, 1)
    const lost = [batch(100, 1, 'ETH'), batch(200, 1, 'AR')]
    const first = await node.putBatch(kept)
    for (const each of lost) await node.putBatch(each)
    await node.stop()
    await store.close()
    log.loseAfter(first.position)
    const meanwhile = batch(300, 1, 'SOL')
    const writer = await member(log, 'writer')
    await writer.node.putBatch(meanwhile)

    const resent: ResentCommits[] = []
    let refused: unknown
    try {
      await ClusterNode.follow(await openStore(db), log.connect(), { nodeId: 'a', onResent: (r) => resent.push(r) })
    } catch (err) {
      refused = err
    }
    expect(isPriceStoreError(refused, 'PRICE_REPLICA_DIVERGED'), String(refused)).toBe(true)
    expect((refused as PriceStoreError).details).toMatchObject({ forked: true })
    expect((refused as Error).message).toMatch(/The 2 commits \(2 records\) this node holds that the stream lost were sent to it again/)
    expect(resent).toEqual([expect.objectContaining({ commits: 2, records: 2 })])
    expect(await exportJson((await newcomer(log)).store)).toEqual(await modelOf([kept, ...lost, meanwhile]))
  })
})
