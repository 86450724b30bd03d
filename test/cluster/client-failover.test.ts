/**
 * `price-store/client` failing over between real cluster nodes: two `price-store serve` processes on one NATS
 * server (an R1 stream). The client subscribes through node A's `/ws` while batches are written through node B;
 * A is killed (SIGKILL) mid-stream, and the client, on its own, subscribes on B after the last eventId it
 * received. The records it yields must be exactly the records written, batch by batch in commit order: no gap,
 * no duplicate, no reset, and B's subscription must start at the last eventId A sent. Then the harder case, on
 * three nodes writing through C: B is frozen (SIGSTOP) until the client's position has passed B's, A is killed,
 * and B is resumed only once the client's connection to it is on its way; B waits until it has applied the
 * client's position before it replays, so the records are again exactly those written.
 */
import WebSocket from 'ws'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PriceClient, type PriceUpdate } from '../../src/client.js'
import { waitConverged } from './support/cluster-checks.js'
import { ClusterWriter, WRITER_SYMBOLS } from './support/cluster-writer.js'
import { startFaultCluster, type FaultCluster } from './support/fault-cluster.js'
import { NATS_SKIP_REASON, natsServerPath } from './support/nats-cluster.js'
import { eventually, type NodeProcess } from './support/node-process.js'

const STREAM = 'CLIENTFAILOVER'

type Keyed = { readonly id: string; readonly symbol: string; readonly timestamp: number; readonly value: number }
const key = (record: Keyed): string => `${record.id} ${record.symbol} ${record.timestamp} ${record.value}`

/** Checks the updates against the batches written: the records exactly, in commit order, no reset. */
function expectExactly(updates: readonly PriceUpdate[], writer: ClusterWriter): void {
  const acked = writer.acked().sort((x, y) => x.position! - y.position!)
  const prices = updates.filter((update) => update.type === 'prices')
  expect(prices.map((update) => update.position)).toEqual(acked.map((outcome) => outcome.position))
  expect(prices.flatMap((update) => update.records.map(key))).toEqual(acked.flatMap((outcome) => writer.records(outcome.n).map(key)))
  expect(updates.filter((update) => update.type === 'reset')).toEqual([])
}

/** The `connected` update at `node` and the update before it: the subscription there resumed after that one's eventId. */
function expectResumedAt(updates: readonly PriceUpdate[], from: string, node: string): void {
  const connected = updates.find((update) => update.type === 'connected' && update.node === node)
  const before = updates.slice(0, updates.indexOf(connected!)).filter((update) => update.type !== 'connected').at(-1)
  expect(before?.node).toBe(from)
  expect(connected).toMatchObject({ resumed: true, eventId: before!.eventId, position: before!.position })
  expect(connected!.eventId).toMatch(/^[0-9]+\.[0-9a-f]{8}$/)
}

describe.skipIf(!natsServerPath())(`price-store/client failing over between nodes (1 NATS server, R1) ${natsServerPath() ? '' : NATS_SKIP_REASON}`, () => {
  let cluster: FaultCluster | undefined
  const context = (): string => cluster?.context() ?? ''

  beforeAll(async () => {
    cluster = await startFaultCluster({ name: 'client-failover', stream: STREAM, servers: 1, nodes: ['a', 'b'] })
  }, 120_000)

  afterAll(async () => {
    await cluster?.close()
  })

  it('a subscription whose node is killed goes on at the other node with exactly the records written', async () => {
    const [a, b] = cluster!.nodes as [NodeProcess, NodeProcess]
    const writer = new ClusterWriter(() => [b.url])
    // a's URL is gone with its process: kept here.
    const aUrl = a.url
    const client = new PriceClient({ nodes: [aUrl, b.url], WebSocket })
    const subscription = client.subscribe([...WRITER_SYMBOLS])
    const updates: PriceUpdate[] = []
    const reading = (async () => {
      for await (const update of subscription) updates.push(update)
    })()
    const lastPosition = (): number => updates.filter((update) => update.type === 'prices').at(-1)?.position ?? 0
    const connectedTo = (node: NodeProcess): boolean => updates.some((update) => update.type === 'connected' && update.node === (node === a ? aUrl : node.url))
    let done = false
    let writing: Promise<void> | undefined
    try {
      await eventually('the client subscribed at a', async () => (connectedTo(a) ? true : undefined), context)
      writing = writer.writeUntil(() => done, 2)
      await eventually('the client following a', async () => (lastPosition() >= 10 ? true : undefined), context)
      await a.kill()
      await eventually('the client subscribed at b', async () => (connectedTo(b) ? true : undefined), context)
      const atFailover = lastPosition()
      await eventually('the client following b', async () => (lastPosition() >= atFailover + 10 ? true : undefined), context)
    } finally {
      done = true
      await writing
    }
    expect(writer.failed()).toEqual([])
    const last = await waitConverged([b], cluster!.nats.urls, STREAM)
    await eventually('the client at the last commit', async () => (lastPosition() === last ? true : undefined), context)
    subscription.close()
    await reading

    // The records yielded: exactly the batches written, in the order of their commits.
    expectExactly(updates, writer)
    const acked = writer.acked()
    const prices = updates.filter((update) => update.type === 'prices')

    // One subscription at each node; the one at b resumed after the last eventId a sent (a portable N.tag).
    expect(updates.filter((update) => update.type === 'connected').map((update) => update.node)).toEqual([aUrl, b.url])
    expectResumedAt(updates, aUrl, b.url)
    expect(prices.some((update) => update.node === aUrl)).toBe(true)
    expect(prices.some((update) => update.node === b.url)).toBe(true)
    expect(subscription.lastEventId).toBe(prices.at(-1)!.eventId)

    // A read from a fresh client passes over the dead node, and answers at the last commit.
    const reader = new PriceClient({ nodes: [aUrl, b.url] })
    const newest = acked.flatMap((outcome) => writer.records(outcome.n)).filter((record) => record.symbol === 'BTC').sort((x, y) => y.timestamp - x.timestamp)[0]!
    expect(key((await reader.latest('BTC', { minPosition: last }))!)).toBe(key(newest))
    expect(reader.node).toBe(b.url)
  }, 120_000)

  it('resumes on a node behind the client once that node has caught up: no gap, no duplicate', async () => {
    const three = await startFaultCluster({ name: 'client-failover-3', stream: `${STREAM}3`, servers: 1, nodes: ['a', 'b', 'c'] })
    const context3 = (): string => three.context()
    const [a, b, c] = three.nodes as [NodeProcess, NodeProcess, NodeProcess]
    const aUrl = a.url
    const bUrl = b.url
    const writer = new ClusterWriter(() => [c.url])
    let reachedB: () => void = () => {}
    const connectingToB = new Promise<void>((resolve) => (reachedB = resolve))
    // The client's WebSocket class: the ws package's, telling the test when a connection to b is opened.
    class Watched extends WebSocket {
      constructor(url: string) {
        super(url)
        if (url.startsWith(bUrl.replace(/^http/, 'ws'))) reachedB()
      }
    }
    const client = new PriceClient({ nodes: [aUrl, bUrl, c.url], WebSocket: Watched })
    const subscription = client.subscribe([...WRITER_SYMBOLS])
    const updates: PriceUpdate[] = []
    const reading = (async () => {
      for await (const update of subscription) updates.push(update)
    })()
    const lastPosition = (): number => updates.filter((update) => update.type === 'prices').at(-1)?.position ?? 0
    let done = false
    let writing: Promise<void> | undefined
    let bAtPause = 0
    try {
      await eventually('the client subscribed at a', async () => (updates.length > 0 ? true : undefined), context3)
      writing = writer.writeUntil(() => done, 2)
      await eventually('the client following a', async () => (lastPosition() >= 10 ? true : undefined), context3)
      bAtPause = (await b.replication()).position
      b.pause()
      await eventually('the client ahead of b', async () => (lastPosition() >= bAtPause + 10 ? true : undefined), context3)
      await a.kill()
      await connectingToB
      b.resume()
      await eventually('the client subscribed at b', async () => (updates.some((update) => update.type === 'connected' && update.node === bUrl) ? true : undefined), context3)
      const atFailover = lastPosition()
      await eventually('the client following b', async () => (lastPosition() >= atFailover + 10 ? true : undefined), context3)
      done = true
      await writing
      expect(writer.failed()).toEqual([])
      const last = await waitConverged([b, c], three.nats.urls, `${STREAM}3`)
      await eventually('the client at the last commit', async () => (lastPosition() === last ? true : undefined), context3)
      subscription.close()
      await reading
      expectExactly(updates, writer)
      expect(updates.filter((update) => update.type === 'connected').map((update) => update.node)).toEqual([aUrl, bUrl])
      expectResumedAt(updates, aUrl, bUrl)
      // b had not applied the position the client resumed after when the client asked.
      const resumedAt = updates.filter((update) => update.type === 'connected')[1]!.position
      expect(resumedAt).toBeGreaterThan(bAtPause)
    } finally {
      done = true
      if (b.running) b.resume()
      subscription.close()
      await writing
      await three.close()
    }
  }, 120_000)
})
