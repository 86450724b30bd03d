/**
 * GET /prices/stream with portable event ids: an event of a commit that has
 * a replication log's id carries `id: P.tag`, so the `Last-Event-ID` a client
 * sends back names the commit, not only its position. Resumed on a store that
 * holds that commit at `P`, the stream goes on with no reset; on one that
 * holds another commit there (the log was rewritten), it starts with a
 * `reset` event of reason `forked`. Tags are computed from their
 * definition (FNV-1a, 8 hex digits: test/support/commit-tag.ts).
 */
import { MemoryLevel } from 'memory-level'
import { afterEach, describe, expect, it } from 'vitest'
import { startServer } from '../../../src/adapters/http/node.js'
import { PriceStore } from '../../../src/index.js'
import { T0, TEST_PROVIDER, makeRecord } from '../../../src/testing/records.js'
import { openSse, takeEvents, type SentEvent } from '../../support/http/sse-client.js'
import { until } from '../../support/http/operations-helpers.js'
import { referenceCommitTag } from '../../support/commit-tag.js'
import { FakeReplica } from './replica-fake.js'

const open: { close(): Promise<void> }[] = []
afterEach(async () => {
  for (const item of open.splice(0).reverse()) await item.close()
})

const tag = referenceCommitTag

/** A store whose commits 1..count have ids `${prefix}-${position}`, served; with `replica`, as a cluster node. */
async function served(prefix: string, count: number, replica = false) {
  const store = await PriceStore.open(new MemoryLevel(), { provider: TEST_PROVIDER })
  open.push(store)
  for (let position = 1; position <= count; position++) {
    await store.putBatch([makeRecord({ timestamp: T0 + position * 1000, id: `${prefix}${position}` })], { position, commitId: `${prefix}-${position}` })
  }
  const fake = replica ? new FakeReplica(store) : undefined
  fake?.advanceTo(count)
  const server = await startServer({ store, ...(fake === undefined ? {} : { replica: fake }) })
  open.push(server)
  return { store, replica: fake, url: `${server.url}/prices/stream` }
}

const head = ({ event, id, data }: SentEvent) => ({ event, id, position: JSON.parse(data).position, reason: JSON.parse(data).reason })

describe('GET /prices/stream with portable event ids', () => {
  it('names each commit by P.tag: ready (the head), prices, progress', async () => {
    const { store, url } = await served('a', 2)
    const sse = await openSse(`${url}?symbol=BTC`)
    open.push(sse)
    await store.putBatch([makeRecord({ timestamp: T0 + 9000, id: 'n' })], { position: 3, commitId: 'a-3' })
    await store.putBatch([makeRecord({ symbol: 'ETH', timestamp: T0 + 9000 })], { position: 4, commitId: 'a-4' })
    expect((await takeEvents(sse, 2)).map(head)).toEqual([
      { event: 'ready', id: `2.${tag('a-2')}`, position: 2, reason: undefined },
      { event: 'prices', id: `3.${tag('a-3')}`, position: 3, reason: undefined },
    ])
    await store.putBatch([makeRecord({ timestamp: T0 + 9500, id: 'm' })], { position: 5, commitId: 'a-5' })
    // A replay of ETH alone: its one commit, then progress over the BTC commit after it.
    const replay = await openSse(`${url}?symbol=ETH&after=0`)
    open.push(replay)
    expect((await takeEvents(replay, 3)).map(head)).toEqual([
      { event: 'ready', id: '0', position: 0, reason: undefined },
      { event: 'prices', id: `4.${tag('a-4')}`, position: 4, reason: undefined },
      { event: 'progress', id: `5.${tag('a-5')}`, position: 5, reason: undefined },
    ])
  })

  it('a Last-Event-ID naming the commit this store holds resumes after it, with no reset', async () => {
    const { url } = await served('a', 4)
    const sse = await openSse(url, { 'last-event-id': `2.${tag('a-2')}` })
    open.push(sse)
    expect((await takeEvents(sse, 3)).map(head)).toEqual([
      { event: 'ready', id: `2.${tag('a-2')}`, position: 2, reason: undefined },
      { event: 'prices', id: `3.${tag('a-3')}`, position: 3, reason: undefined },
      { event: 'prices', id: `4.${tag('a-4')}`, position: 4, reason: undefined },
    ])
  })

  it('a Last-Event-ID naming another commit at that position (the log was rewritten): a reset `forked` to the head', async () => {
    const { url } = await served('b', 5)
    const sse = await openSse(url, { 'last-event-id': `3.${tag('a-3')}` })
    open.push(sse)
    expect((await takeEvents(sse, 2)).map(head)).toEqual([
      { event: 'ready', id: `3.${tag('a-3')}`, position: 3, reason: undefined },
      { event: 'reset', id: `5.${tag('b-5')}`, position: 5, reason: 'forked' },
    ])
  })

  it('on a replicated node, a portable Last-Event-ID past its position waits for it, then is checked', async () => {
    const { store, replica, url } = await served('a', 1, true)
    const opening = openSse(url, { 'last-event-id': `3.${tag('a-3')}` })
    await until(() => replica?.waiting === 1, 'the stream waits for position 3')
    await store.putBatch([makeRecord({ timestamp: T0 + 50_000 })], { position: 3, commitId: 'a-3' })
    replica?.advanceTo(3)
    const sse = await opening
    open.push(sse)
    await store.putBatch([makeRecord({ timestamp: T0 + 60_000 })], { position: 4, commitId: 'a-4' })
    expect((await takeEvents(sse, 2)).map(head)).toEqual([
      { event: 'ready', id: `3.${tag('a-3')}`, position: 3, reason: undefined },
      { event: 'prices', id: `4.${tag('a-4')}`, position: 4, reason: undefined },
    ])
  })

  it('a Last-Event-ID that is no event id of this stream is a 400 naming the header', async () => {
    const { url } = await served('a', 1)
    for (const id of ['2.xyz', '2.0A3F9C12', 'abc', '2.0a3f9c12.3']) {
      const response = await fetch(url, { headers: { 'last-event-id': id } })
      expect(response.status, id).toBe(400)
      const { error } = (await response.json()) as { error: { code: string; message: string } }
      expect(error.code).toBe('PRICE_INVALID_QUERY')
      expect(error.message).toContain('Last-Event-ID')
    }
  })
})
