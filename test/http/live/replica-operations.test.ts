/**
 * /health, /metrics and /stats on a replicated node (issue 21): the node's
 * replication status in the health report (503 when replication failed or
 * stopped, or past `maxLag`; a lost connection keeps serving reads), the
 * replication gauges and counters, and the cluster's position in /stats.
 * Without a replica, none of it appears. A fake replica stands in for a
 * cluster node; the test sets its state.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { startServer, type RunningServer } from '../../../src/adapters/http/node.js'
import type { PriceStore } from '../../../src/index.js'
import { openDemoStore } from '../../support/http/demo-server.js'
import { scrape } from '../../support/http/operations-helpers.js'
import { FakeReplica } from './replica-fake.js'

let store: PriceStore
let single: RunningServer
let node: RunningServer
let replica: FakeReplica
const reported: unknown[] = []

beforeAll(async () => {
  ;({ store } = await openDemoStore())
  const onError = (err: unknown): void => void reported.push(err)
  single = await startServer({ store, metrics: true, onError })
  replica = new FakeReplica()
  node = await startServer({ store, replica, maxLag: 10, metrics: true, onError })
}, 30_000)

afterAll(async () => {
  await single?.close()
  await node?.close()
  await store?.close()
})

beforeEach(() => {
  Object.assign(replica, { state: 'applying', position: 1, streamPosition: 1, appliedBatches: 1, appliedRecords: 7, refusedCommits: 0, heardAgoMs: undefined, error: undefined })
})

async function getJson(url: string): Promise<{ status: number; headers: Headers; json: any }> {
  const res = await fetch(url)
  return { status: res.status, headers: res.headers, json: await res.json() }
}

describe('GET /health on a replicated node', () => {
  it('reports the replication status beside today\'s fields, 200 while applying', async () => {
    const { status, headers, json } = await getJson(`${node.url}/health`)
    expect(status).toBe(200)
    expect(headers.get('cache-control')).toBe('no-store')
    expect(json).toEqual({ status: 'ok', store: 'open', position: 1, replication: replica.replication() })
    expect(json.replication).toEqual({ node: 'node-a', state: 'applying', stream: 'PRICES', position: 1, streamPosition: 1, lag: 0, appliedBatches: 1, appliedRecords: 7, refusedCommits: 0 })
  })

  it('stays 200 while connecting (reads are still served) and says so', async () => {
    replica.state = 'connecting'
    const { status, json } = await getJson(`${node.url}/health`)
    expect(status).toBe(200)
    expect(json.status).toBe('ok')
    expect(json.replication.state).toBe('connecting')
  })

  it('answers 503 naming the error code when replication failed', async () => {
    replica.state = 'failed'
    replica.error = { code: 'PRICE_REPLICA_DIVERGED', message: 'the stream no longer holds position 2: re-seed this node from a backup' }
    const { status, json } = await getJson(`${node.url}/health`)
    expect(status).toBe(503)
    expect(json.status).toBe('unavailable')
    expect(json.reason).toMatch(/failed \(PRICE_REPLICA_DIVERGED\)/)
    expect(json).not.toHaveProperty('position') // as in every unavailable report; replication holds it
    expect(json.replication.error).toEqual(replica.error)
  })

  it('answers 503 when replication is stopped', async () => {
    replica.state = 'stopped'
    const { status, json } = await getJson(`${node.url}/health`)
    expect(status).toBe(503)
    expect(json.reason).toMatch(/stopped/)
  })

  it('answers 503 past maxLag, naming the lag and the limit; 200 at it', async () => {
    replica.streamPosition = 11 // lag 10: at the limit
    expect((await getJson(`${node.url}/health`)).status).toBe(200)
    replica.streamPosition = 12
    const { status, json } = await getJson(`${node.url}/health`)
    expect(status).toBe(503)
    expect(json.reason).toMatch(/11 positions behind.*maxLag 10/)
    expect(json.replication.lag).toBe(11)
  })

  it('answers 200 whatever the lag without maxLag, and an unknown lag never counts', async () => {
    const relaxed = await startServer({ store, replica })
    try {
      replica.streamPosition = 1_000_000
      expect((await getJson(`${relaxed.url}/health`)).status).toBe(200)
    } finally {
      await relaxed.close()
    }
    replica.streamPosition = undefined
    const { status, json } = await getJson(`${node.url}/health`)
    expect(status).toBe(200)
    expect(json.replication).not.toHaveProperty('lag')
  })

  it('answers 503 past maxStalenessMs, and while the node has not heard from the log at all; 200 at the bound', async () => {
    const bounded = await startServer({ store, replica, maxStalenessMs: 3_000 })
    try {
      replica.heardAgoMs = 3_000
      expect((await getJson(`${bounded.url}/health`)).status).toBe(200)
      replica.state = 'isolated'
      replica.heardAgoMs = 3_001
      const { status, json } = await getJson(`${bounded.url}/health`)
      expect(status).toBe(503)
      expect(json.reason).toMatch(/last heard from the stream 3001 ms ago \(state isolated\), more than maxStalenessMs 3000/)
      replica.heardAgoMs = undefined
      const never = await getJson(`${bounded.url}/health`)
      expect(never.status).toBe(503)
      expect(never.json.reason).toMatch(/has not heard from the stream yet/)
    } finally {
      await bounded.close()
    }
    // Without the option, staleness never fails the check.
    replica.heardAgoMs = 10 ** 9
    expect((await getJson(`${node.url}/health`)).status).toBe(200)
  })

  it('without a replica, answers as before: no replication member', async () => {
    const { status, json } = await getJson(`${single.url}/health`)
    expect(status).toBe(200)
    expect(json).toEqual({ status: 'ok', store: 'open', position: 1 })
  })
})

describe('GET /metrics on a replicated node', () => {
  it('reports positions, lag, connection, state and applied counts as of the scrape', async () => {
    Object.assign(replica, { position: 40, streamPosition: 45, appliedBatches: 39, appliedRecords: 1234 })
    const metrics = await scrape(node.url)
    expect(metrics.value('price_store_replication_position')).toBe(40)
    expect(metrics.value('price_store_replication_stream_position')).toBe(45)
    expect(metrics.value('price_store_replication_lag')).toBe(5)
    expect(metrics.value('price_store_replication_connected')).toBe(1)
    expect(metrics.value('price_store_replication_applied_batches_total')).toBe(39)
    expect(metrics.value('price_store_replication_applied_records_total')).toBe(1234)
    expect(metrics.types.get('price_store_replication_applied_records_total')).toBe('counter')
    expect(metrics.types.get('price_store_replication_lag')).toBe('gauge')
    const states = metrics.samples.filter((sample) => sample.name === 'price_store_replication_state')
    expect(states.map((sample) => [sample.labels.state, sample.value])).toEqual([['applying', 1], ['connecting', 0], ['isolated', 0], ['failed', 0], ['stopped', 0]])
    expect(metrics.value('price_store_replication_refused_commits_total')).toBe(0)
    expect(metrics.has('price_store_replication_heard_ago_seconds')).toBe(false)

    replica.state = 'connecting'
    replica.position = 41
    replica.heardAgoMs = 2_500
    replica.refusedCommits = 2
    const later = await scrape(node.url)
    expect(later.value('price_store_replication_heard_ago_seconds')).toBe(2.5)
    expect(later.value('price_store_replication_refused_commits_total')).toBe(2)
    expect(later.value('price_store_replication_connected')).toBe(0)
    expect(later.value('price_store_replication_position')).toBe(41)
    expect(later.value('price_store_replication_state', { state: 'connecting' })).toBe(1)
    expect(later.value('price_store_replication_state', { state: 'applying' })).toBe(0)
  })

  it('has no sample of the stream position or the lag until they are known', async () => {
    replica.streamPosition = undefined
    const metrics = await scrape(node.url)
    expect(metrics.has('price_store_replication_stream_position')).toBe(false)
    expect(metrics.has('price_store_replication_lag')).toBe(false)
    expect(metrics.types.get('price_store_replication_lag')).toBe('gauge')
    expect(metrics.has('price_store_replication_position')).toBe(true)
  })

  it('without a replica, has no replication metric', async () => {
    const metrics = await scrape(single.url)
    expect([...metrics.types.keys()].filter((name) => name.includes('replication'))).toEqual([])
  })
})

describe('GET /stats on a replicated node', () => {
  it('adds the cluster\'s stream, state and positions to the store\'s statistics', async () => {
    Object.assign(replica, { position: 40, streamPosition: 45, heardAgoMs: 120, refusedCommits: 1 })
    const plain = await getJson(`${single.url}/stats`)
    const { status, json } = await getJson(`${node.url}/stats`)
    expect(status).toBe(200)
    const { cluster, ...rest } = json
    expect(rest).toEqual(plain.json)
    expect(cluster).toEqual({ stream: 'PRICES', state: 'applying', position: 40, streamPosition: 45, lag: 5, heardAgoMs: 120, refusedCommits: 1 })
    expect(plain.json).not.toHaveProperty('cluster')
  })

  it('leaves out the stream position, the lag and the staleness until known', async () => {
    replica.streamPosition = undefined
    const { json } = await getJson(`${node.url}/stats`)
    expect(json.cluster).toEqual({ stream: 'PRICES', state: 'applying', position: 1, refusedCommits: 0 })
  })

  it('reported no error to the host', () => {
    expect(reported).toEqual([])
  })
})
