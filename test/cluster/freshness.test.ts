/**
 * How fresh a node says it is: `heardAgoMs` (the time since it last heard
 * from the stream), and `isolated` for a node connected to NATS whose stream
 * no longer answers (the minority side of a partition), which goes back to
 * `applying` once the stream answers again. On the in-memory log, whose
 * connection can stay up while the stream is unreachable. Waits are for
 * observable states (`until`); the 3 s a node takes to call itself isolated
 * only delays the first wait, whose bound is far above it.
 */
import { MemoryLevel } from 'memory-level'
import { afterEach, describe, expect, it } from 'vitest'
import { ClusterNode } from '../../src/cluster.js'
import { PriceStore } from '../../src/index.js'
import { T0, TEST_PROVIDER, makeRecord } from '../../src/testing/records.js'
import { until } from '../support/http/operations-helpers.js'
import { MemoryLog } from './support/memory-log.js'

const cleanup: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step()
})

describe('a node cut off from its stream', () => {
  it('says isolated, with the time since it last heard from the stream, refuses writes, and applies again once the stream answers', async () => {
    const log = new MemoryLog({ maxMessageBytes: 4_096 })
    const store = await PriceStore.open(new MemoryLevel(), { provider: TEST_PROVIDER })
    cleanup.push(() => store.close())
    const conn = log.connect()
    const node = await ClusterNode.follow(store, conn, { applyWaitMs: 0 })
    cleanup.push(() => node.stop())
    const first = await node.putBatch([makeRecord({ timestamp: T0 })])
    expect(await node.waitForPosition(first.position, 10_000)).toBe(true)
    expect(node.replication().state).toBe('applying')
    expect(node.replication().heardAgoMs).toBeLessThan(3_000)

    conn.setStreamReachable(false)
    await until(() => node.replication().state === 'isolated', 'the node says it is isolated', 15_000)
    const isolated = node.replication()
    expect(isolated.heardAgoMs).toBeGreaterThanOrEqual(3_000)
    expect(conn.connected).toBe(true)
    await expect(node.putBatch([makeRecord({ timestamp: T0 + 1_000 })])).rejects.toMatchObject({ code: 'PRICE_LOG_UNAVAILABLE' })
    expect(store.position).toBe(first.position)

    conn.setStreamReachable(true)
    await until(() => node.replication().state === 'applying', 'the node hears from the stream again', 15_000)
    expect(node.replication().heardAgoMs).toBeLessThan(isolated.heardAgoMs!)
    const next = await node.putBatch([makeRecord({ timestamp: T0 + 2_000 })])
    expect(await node.waitForPosition(next.position, 10_000)).toBe(true)
  })
})
