/**
 * Subscriptions with failover, on a fake cluster (nodes serving `/ws` from one shared list of commits) and a fake
 * clock: a node lost mid-stream is replaced by the next with `after` set to the last eventId, so the commits go on
 * with no gap and no duplicate; a `reset` is handed over as it is; an overflow resumes on the same node; a node's
 * refusal is the caller's error; every node down is `PRICE_CLIENT_NO_NODE`.
 */
import { describe, expect, it } from 'vitest'
import { PriceClient, isPriceClientError, type PriceUpdate } from '../../src/client.js'
import { FakeClock, FakeCluster, PausingClock, take } from './fakes.js'

const NODES = ['http://a.test:9000', 'http://b.test:9000', 'http://c.test:9000'] as const
const [A, B, C] = NODES
const positions = (updates: readonly PriceUpdate[]): number[] => updates.filter((u) => u.type === 'prices').map((u) => u.position)
const setup = (clock: FakeClock = new PausingClock()): { cluster: FakeCluster; client: PriceClient; clock: FakeClock } => {
  const cluster = new FakeCluster(NODES)
  return { cluster, clock, client: new PriceClient({ nodes: [...NODES], WebSocket: cluster.WebSocket, timers: clock, random: () => 0 }) }
}

describe('PriceClient.subscribe', () => {
  it('resumes on the next node after the last eventId when its node is lost: no gap, no duplicate', async () => {
    const { cluster, client } = setup()
    for (let i = 0; i < 3; i++) cluster.commit()
    const subscription = client.subscribe(['BTC'], { after: 0 })
    const updates = await take(subscription, (all) => positions(all).length === 8, (update) => {
      if (update.type === 'prices' && update.position === 5) {
        // A dies after sending 5; 6 and 7 are committed while the client is away.
        cluster.node(A).kill()
        cluster.commit()
        cluster.commit()
      }
      if (update.type === 'connected' && update.node === B) cluster.commit()
      if (update.type === 'prices' && update.position < 3) cluster.commit()
    })
    expect(positions(updates)).toEqual([1, 2, 3, 4, 5, 6, 7, 8])
    const connected = updates.filter((u) => u.type === 'connected')
    expect(connected).toEqual([
      { type: 'connected', node: A, eventId: '0', position: 0, resumed: true, unknown: [] },
      { type: 'connected', node: B, eventId: updates.find((u) => u.position === 5 && u.type === 'prices')!.eventId, position: 5, resumed: true, unknown: [] },
    ])
    expect(cluster.node(B).subscribes).toEqual([{ type: 'subscribe', id: 'price-client', symbols: ['BTC'], after: connected[1]!.eventId }])
    expect(subscription.lastEventId).toBe(`8.${cluster.commits[7]!.tag}`)
    expect(subscription.node).toBe(B)
    expect(client.node).toBe(B)
  })

  it('hands a reset to the caller as it is, and goes on after its position', async () => {
    const { cluster, client } = setup()
    for (let i = 0; i < 4; i++) cluster.commit()
    cluster.node(B).applied = 2
    cluster.node(A).kill()
    // Resuming after 4 on B, which has applied 2 only: B says reset (unknown).
    const updates = await take(client.subscribe(['BTC'], { after: `4.${cluster.commits[3]!.tag}` }), (all) => all.length === 2)
    expect(updates[1]).toEqual({ type: 'reset', node: B, reason: 'unknown', requested: 4, position: 2, eventId: `2.${cluster.commits[1]!.tag}` })
  })

  it('never yields a commit twice, even when a node sends one again', async () => {
    const { cluster, client } = setup()
    cluster.commit()
    cluster.node(A).answer = (message) => [
      { type: 'subscribed', id: message.id, eventId: '0', position: 0 },
      { type: 'prices', id: message.id, eventId: '1.aa', position: 1, records: [] },
      { type: 'prices', id: message.id, eventId: '1.aa', position: 1, records: [] },
      { type: 'progress', id: message.id, eventId: '2.bb', position: 2 },
      { type: 'unsubscribed', id: 'other', ended: [] },
      { type: 'prices', id: message.id, eventId: '3.cc', position: 3, records: [{ symbol: 'BTC' }], pruned: 1 },
    ]
    const updates = await take(client.subscribe(['BTC'], { after: 0 }), (all) => all.length === 4)
    expect(updates.map((u) => u.eventId)).toEqual(['0', '1.aa', '2.bb', '3.cc'])
    expect(updates[3]).toEqual({ type: 'prices', node: A, eventId: '3.cc', position: 3, records: [{ symbol: 'BTC' }], pruned: 1 })
  })

  it('resumes on the same node after an overflow, and on the next after an end', async () => {
    const { cluster, client } = setup()
    cluster.commit()
    cluster.commit()
    let overflowed = false
    cluster.node(A).answer = (message) => {
      // The second time: served, then the node closes.
      const last = `2.${cluster.commits[1]!.tag}`
      if (overflowed) return [...cluster.serve([...cluster.node(A).sockets].at(-1)!, message), { type: 'end', id: message.id, eventId: last, reason: 'closing', position: 2 }]
      overflowed = true
      return [{ type: 'subscribed', id: message.id, eventId: '0', position: 0 }, { type: 'overflow', id: message.id, eventId: '0', reason: 'pending', position: 0 }]
    }
    cluster.node(B).answer = (message) => [{ type: 'subscribed', id: message.id, eventId: message.after, position: 2 }, { type: 'end', id: message.id, eventId: message.after, reason: 'closing', position: 2 }]
    const updates = await take(client.subscribe(['BTC'], { after: 0 }), (all) => all.filter((u) => u.type === 'connected').length === 4)
    expect(cluster.node(A).subscribes.map((m) => m.after)).toEqual(['0', '0'])
    expect(cluster.connections).toEqual([A, A, B, C])
    expect(positions(updates)).toEqual([1, 2])
    expect(cluster.node(C).subscribes.at(-1)?.after).toBe(`2.${cluster.commits[1]!.tag}`)
  })

  it('throws a refusal of the node with its code, and moves on from an error a node may not make again', async () => {
    const { cluster, client } = setup()
    cluster.node(A).answer = (message) => [{ type: 'error', id: message.id, code: 'PRICE_NOT_OPEN', message: 'closing' }]
    cluster.node(B).answer = (message) => [{ type: 'error', id: message.id, code: 'PRICE_INVALID_SYMBOL', message: 'bad symbol "B C"' }]
    const error = await take(client.subscribe(['B C']), () => false).catch((err: unknown) => err)
    expect(isPriceClientError(error, 'PRICE_INVALID_SYMBOL')).toBe(true)
    expect(error).toMatchObject({ details: { node: B } })
    expect(cluster.connections).toEqual([A, B])
  })

  it('gives PRICE_CLIENT_NO_NODE with each node\'s last error once every round failed', async () => {
    const { cluster, clock } = setup()
    const client = new PriceClient({ nodes: [...NODES], WebSocket: cluster.WebSocket, timers: clock, random: () => 1, subscribeRetry: { rounds: 3, baseDelayMs: 10, maxDelayMs: 15 } })
    for (const node of cluster.nodes) node.alive = false
    const error = await take(client.subscribe(['BTC']), () => false).catch((err: unknown) => err)
    expect(error).toMatchObject({ code: 'PRICE_CLIENT_NO_NODE' })
    expect((error as { details: { nodes: unknown[] } }).details.nodes).toEqual(NODES.map((node) => ({ node, code: 'PRICE_CLIENT_NETWORK', message: 'the connection closed (1006)' })))
    expect(cluster.connections).toHaveLength(9)
    expect(clock.delays().filter((ms) => ms !== 15_000)).toEqual([10, 15])
  })

  it('moves on from a node that does not answer its subscribe within connectTimeoutMs', async () => {
    const clock = new FakeClock()
    const { cluster } = setup(clock)
    const client = new PriceClient({ nodes: [...NODES], WebSocket: cluster.WebSocket, timers: clock, connectTimeoutMs: 777 })
    cluster.node(A).answer = () => []
    const updates = take(client.subscribe(['BTC']), (all) => all.length === 1)
    await new Promise((resolve) => setImmediate(resolve))
    expect(clock.fire(777)).toBe(1)
    expect((await updates)[0]).toMatchObject({ type: 'connected', node: B, resumed: false })
  })

  it('ends the iteration, without an error, on close() or the signal, and closes its connection', async () => {
    const { cluster, client } = setup()
    const controller = new AbortController()
    const subscription = client.subscribe(['BTC'], { signal: controller.signal })
    const updates = take(subscription, () => false, (update) => {
      if (update.type === 'connected') controller.abort()
    })
    expect(await updates).toHaveLength(1)
    expect(cluster.node(A).sockets.size).toBe(0)
    const other = client.subscribe(['BTC'])
    other.close()
    expect(await take(other, () => false)).toEqual([])
    expect(() => other[Symbol.asyncIterator]()).toThrow(expect.objectContaining({ code: 'PRICE_CLIENT_INVALID_OPTIONS' }))
  })
})
