/**
 * `/ws` on a replicated node, as the live stream: a subscription resuming
 * after a position this node has not applied yet waits for it (at most
 * `minPositionWaitMs`), then goes on with no gap and no reset; past the
 * wait, it says `reset` (`unknown`). A fake replica stands in for a cluster node.
 */
import { MemoryLevel } from 'memory-level'
import { afterEach, describe, expect, it } from 'vitest'
import { startServer, type StartServerOptions } from '../../../src/adapters/http/node.js'
import { PriceStore } from '../../../src/index.js'
import { T0, TEST_PROVIDER, makeRecord, type InputRecord } from '../../../src/testing/records.js'
import { until } from '../../support/http/operations-helpers.js'
import { FakeReplica } from '../live/replica-fake.js'
import { connectWs, type WsClient } from './ws-client.js'

const open: { close(): Promise<void> }[] = []
afterEach(async () => {
  for (const item of open.splice(0).reverse()) await item.close()
})

async function setup(options: Partial<StartServerOptions> = {}): Promise<{ store: PriceStore; replica: FakeReplica; ws: WsClient }> {
  const store = await PriceStore.open(new MemoryLevel(), { provider: TEST_PROVIDER })
  open.push(store)
  const replica = new FakeReplica(store)
  const server = await startServer({ store, replica, ...options })
  open.push(server)
  const ws = await connectWs(`${server.url.replace('http', 'ws')}/ws`)
  open.push(ws)
  return { store, replica, ws }
}

const batch = (from: number, count: number): InputRecord[] => Array.from({ length: count }, (_, i) => makeRecord({ timestamp: T0 + (from + i) * 1000 }))

describe('/ws on a replicated node', () => {
  it('waits for the position a subscription resumes after, then goes on with no gap and no reset', async () => {
    const { store, replica, ws } = await setup()
    await store.putBatch(batch(0, 1), { position: 1 })
    replica.advanceTo(1)
    const symbol = batch(0, 1)[0]!.symbol
    ws.send({ type: 'subscribe', id: 'c', symbols: [symbol], after: '5' })
    await until(() => replica.waiting === 1, 'the subscription waits for position 5')
    await store.putBatch(batch(5, 1), { position: 3 })
    await store.putBatch(batch(10, 2), { position: 5 })
    replica.advanceTo(5)
    expect(await ws.next()).toMatchObject({ type: 'subscribed', id: 'c', eventId: '5', position: 5 })
    await store.putBatch(batch(20, 1), { position: 8 })
    expect(await ws.next()).toMatchObject({ type: 'prices', id: 'c', eventId: '8', position: 8 })
  })

  it('past minPositionWaitMs, says reset: the position is unknown here', async () => {
    const { store, replica, ws } = await setup({ minPositionWaitMs: 50 })
    await store.putBatch(batch(0, 1), { position: 1 })
    replica.advanceTo(1)
    ws.send({ type: 'subscribe', id: 'c', symbols: [batch(0, 1)[0]!.symbol], after: 9 })
    expect(await ws.next()).toMatchObject({ type: 'subscribed', eventId: '9', position: 9 })
    expect(await ws.next()).toEqual({ type: 'reset', id: 'c', eventId: '1', reason: 'unknown', requested: 9, position: 1 })
  })
})
