/**
 * GET /prices/stream on a replicated node: a client that lost another node
 * resumes here with a Last-Event-ID this node has not applied yet. The
 * stream waits until the node applies it (at most `minPositionWaitMs`), then
 * goes on with no gap and no reset; past the wait, it opens as a single
 * store would (a `reset` of reason `unknown`). A fake replica stands in for
 * a cluster node: the test applies the commits and advances it.
 */
import { MemoryLevel } from 'memory-level'
import { afterEach, describe, expect, it } from 'vitest'
import { startServer, type StartServerOptions } from '../../../src/adapters/http/node.js'
import { PriceStore } from '../../../src/index.js'
import { toExactJson } from '../../../src/http.js'
import { T0, TEST_PROVIDER, makeRecord, type InputRecord } from '../../../src/testing/records.js'
import { openSse, takeEvents } from '../../support/http/sse-client.js'
import { until } from '../../support/http/operations-helpers.js'
import { FakeReplica } from './replica-fake.js'

const open: { close(): Promise<void> }[] = []
afterEach(async () => {
  for (const item of open.splice(0).reverse()) await item.close()
})

async function setup(options: Partial<StartServerOptions> = {}) {
  const store = await PriceStore.open(new MemoryLevel(), { provider: TEST_PROVIDER })
  open.push(store)
  const replica = new FakeReplica(store)
  const server = await startServer({ store, replica, ...options })
  open.push(server)
  return { store, replica, url: `${server.url}/prices/stream` }
}

const batch = (from: number, count: number): InputRecord[] => Array.from({ length: count }, (_, i) => makeRecord({ timestamp: T0 + (from + i) * 1000 }))
const pricesData = (position: number, records: readonly InputRecord[]): string =>
  `{"position":${position},"records":[${records.map((record) => toExactJson({ ...record, providerPublicKey: TEST_PROVIDER.publicKey })).join(',')}]}`

describe('GET /prices/stream on a replicated node', () => {
  it('waits for the Last-Event-ID a client resumes from, then goes on with no gap and no reset', async () => {
    const { store, replica, url } = await setup()
    await store.putBatch(batch(0, 1), { position: 1 })
    replica.advanceTo(1)
    // The answer's headers come only once the stream opens: the client waits too.
    const opening = openSse(url, { 'last-event-id': '5' })
    await until(() => replica.waiting === 1, 'the stream waits for position 5')
    await store.putBatch(batch(5, 1), { position: 3 })
    await store.putBatch(batch(10, 2), { position: 5 })
    replica.advanceTo(5)
    const sse = await opening
    open.push(sse)
    expect(sse.response.status).toBe(200)
    expect(await takeEvents(sse, 1)).toEqual([{ event: 'ready', id: '5', data: '{"position":5}' }])
    const sixth = batch(20, 1)
    await store.putBatch(sixth, { position: 8 })
    expect(await takeEvents(sse, 1)).toEqual([{ event: 'prices', id: '8', data: pricesData(8, sixth) }])
  })

  it('past minPositionWaitMs, opens as a single store does: a reset, the position unknown here', async () => {
    const { store, replica, url } = await setup({ minPositionWaitMs: 50 })
    await store.putBatch(batch(0, 1), { position: 1 })
    replica.advanceTo(1)
    const sse = await openSse(url, { 'last-event-id': '9' })
    open.push(sse)
    const [ready, reset] = await takeEvents(sse, 2)
    expect(ready).toEqual({ event: 'ready', id: '9', data: '{"position":9}' })
    expect(reset).toEqual({ event: 'reset', id: '1', data: '{"reason":"unknown","requested":9,"position":1}' })
  })

  it('a client resuming at or below the position does not wait', async () => {
    const { store, replica, url } = await setup()
    const first = batch(0, 2)
    await store.putBatch(first, { position: 4 })
    replica.advanceTo(4)
    const sse = await openSse(url, { 'last-event-id': '2' })
    open.push(sse)
    expect(await takeEvents(sse, 2)).toEqual([{ event: 'ready', id: '2', data: '{"position":2}' }, { event: 'prices', id: '4', data: pricesData(4, first) }])
    expect(replica.waits).toEqual([])
  })
})
