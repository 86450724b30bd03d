/**
 * A node started while NATS is down (a NATS cluster restarting) waits for
 * it, within `startTimeoutMs`, reporting each failed try to `onError`, and
 * starts once NATS answers; past the bound it fails with
 * PRICE_LOG_UNAVAILABLE. One real JetStream server, stopped and started by
 * the test; the test starts NATS only after the node reported a failed try,
 * so the order of events is fixed, not timed.
 */
import { MemoryLevel } from 'memory-level'
import { afterAll, describe, expect, it } from 'vitest'
import { ClusterNode } from '../../src/cluster.js'
import { PriceStore, isPriceStoreError } from '../../src/index.js'
import { TEST_PROVIDER } from '../../src/testing/records.js'
import { until } from '../support/http/operations-helpers.js'
import { NATS_SKIP_REASON, natsServerPath, startNatsCluster, type NatsCluster } from './support/nats-cluster.js'
import { timedBatch } from './support/store-fixtures.js'

let nats: NatsCluster | undefined
afterAll(async () => {
  await nats?.close()
})

describe.skipIf(natsServerPath() === undefined)(`a node started before NATS answers${natsServerPath() === undefined ? ` (${NATS_SKIP_REASON})` : ''}`, () => {
  it('waits for NATS within startTimeoutMs, saying so, and starts once NATS is back', async () => {
    nats = await startNatsCluster({ size: 1 })
    await nats.stopAll()
    const store = await PriceStore.open(new MemoryLevel(), { provider: TEST_PROVIDER })
    try {
      const tries: unknown[] = []
      const starting = ClusterNode.start(store, { servers: nats.urls, stream: 'WAIT', startTimeoutMs: 120_000, onError: (err) => tries.push(err) })
      starting.catch(() => {})
      await until(() => tries.length > 0, 'the node reports a failed try', 30_000)
      expect(isPriceStoreError(tries[0], 'PRICE_LOG_UNAVAILABLE'), String(tries[0])).toBe(true)
      await nats.startAll()
      const node = await starting
      try {
        const commit = await node.putBatch(timedBatch(0, 3))
        expect(commit.stored).toBe(3)
        expect(store.position).toBe(commit.position)
      } finally {
        await node.stop()
      }
    } finally {
      await store.close()
    }
  }, 120_000)

  it('fails with PRICE_LOG_UNAVAILABLE once startTimeoutMs has passed, after trying more than once', async () => {
    const store = await PriceStore.open(new MemoryLevel(), { provider: TEST_PROVIDER })
    try {
      const tries: unknown[] = []
      // Port 1 on loopback: nothing listens there, so each try is refused at once.
      await expect(ClusterNode.start(store, { servers: 'nats://127.0.0.1:1', startTimeoutMs: 1_000, onError: (err) => tries.push(err) }))
        .rejects.toMatchObject({ code: 'PRICE_LOG_UNAVAILABLE' })
      expect(tries.length).toBeGreaterThan(0)
    } finally {
      await store.close()
    }
  })
})
