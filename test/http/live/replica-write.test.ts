/**
 * POST /prices on a replicated node (issue 21): the batch goes through the
 * replica (the replication log), never to the store directly; the write
 * endpoint's checks and answers are those of a single node, and a log that
 * cannot take the write is a coded 503 to retry. A fake replica stands in
 * for a cluster node (no NATS).
 */
import { MemoryLevel } from 'memory-level'
import { afterEach, describe, expect, it } from 'vitest'
import { startServer, type RunningServer, type StartServerOptions } from '../../../src/adapters/http/node.js'
import type { PricesQueryable } from '../../../src/http.js'
import { PriceStore, PriceStoreError } from '../../../src/index.js'
import { PROVIDER, demoRecords } from '../../support/http/demo-server.js'
import { TOKEN, answeredBySymbol, expectedBySymbol, ndjson } from '../../support/http/write-server.js'
import { FakeReplica } from './replica-fake.js'

const RECORDS = demoRecords().slice(0, 300)

const opened: { running: RunningServer; store: PriceStore }[] = []
afterEach(async () => {
  for (const { running, store } of opened.splice(0)) {
    await running.close()
    await store.close()
  }
})

interface Node {
  readonly url: string
  readonly store: PriceStore
  readonly replica: FakeReplica
  readonly reported: unknown[]
  post(body: string, headers?: Record<string, string>): Promise<{ status: number; headers: Headers; json: any }>
}

/** A server with a write token (unless `writes` is false) on a fresh store; its writes go through a fake replica applying them to that store, unless `replicated` is false. */
async function startNode(
  options: { replicated?: boolean; served?: (store: PriceStore) => PricesQueryable; writes?: boolean } & Partial<Omit<StartServerOptions, 'replica'>> = {},
): Promise<Node> {
  const { replicated = true, served, writes = true, ...rest } = options
  const store = await PriceStore.open(new MemoryLevel(), { provider: PROVIDER })
  const replica = new FakeReplica(store)
  const reported: unknown[] = []
  const running = await startServer({
    store: served === undefined ? store : served(store),
    ...(writes ? { writeToken: TOKEN } : {}),
    ...(replicated ? { replica } : {}),
    ...rest,
    onError: (err) => reported.push(err),
  })
  opened.push({ running, store })
  return {
    url: running.url,
    store,
    replica,
    reported,
    async post(body, headers = {}) {
      const res = await fetch(`${running.url}/prices`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', ...headers },
        body,
      })
      return { status: res.status, headers: res.headers, json: await res.json() }
    },
  }
}

describe('POST /prices with a replica', () => {
  it('writes the batch through the replica and answers its count and position', async () => {
    const node = await startNode()
    const res = await node.post(JSON.stringify(RECORDS))
    expect(res.status).toBe(200)
    expect(res.json).toEqual({ stored: RECORDS.length, position: 1 })
    expect(node.replica.batches).toHaveLength(1)
    expect(node.replica.batches[0]).toEqual(RECORDS)
    expect(await answeredBySymbol(node.url, RECORDS.map((r) => r.symbol))).toEqual(expectedBySymbol(RECORDS))
  })

  it('serves writes through a replica in front of a store that cannot write itself', async () => {
    const node = await startNode({ served: (store) => ({ query: (params) => store.query(params) }) })
    const res = await node.post(ndjson(RECORDS.slice(0, 5)), { 'content-type': 'application/x-ndjson' })
    expect(res.status).toBe(200)
    expect(res.json).toEqual({ stored: 5, position: 1 })
    expect(node.replica.batches).toHaveLength(1)
  })

  it('answers PRICE_LOG_UNAVAILABLE with 503, retry-after and a message that says to send the batch again', async () => {
    const node = await startNode()
    const cause = new PriceStoreError('PRICE_LOG_UNAVAILABLE', 'no NATS server answered at nats://10.0.0.7:4222 (secret internals)')
    node.replica.failWrites = cause
    const res = await node.post(JSON.stringify(RECORDS.slice(0, 3)))
    expect(res.status).toBe(503)
    expect(res.headers.get('retry-after')).toBe('1')
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8')
    expect(Object.keys(res.json)).toEqual(['error'])
    expect(Object.keys(res.json.error)).toEqual(['code', 'message'])
    expect(res.json.error.code).toBe('PRICE_LOG_UNAVAILABLE')
    expect(res.json.error.message).toMatch(/same batch/)
    expect(res.json.error.message).not.toContain('10.0.0.7')
    expect(node.reported).toEqual([cause]) // the host hears what the client is not shown
    expect(node.store.position).toBe(0)
  })

  it('hands the x-write-concern header to the replica, refuses a bad one with 400 before writing, and answers its timeout with 503', async () => {
    const node = await startNode()
    expect((await node.post(JSON.stringify(RECORDS.slice(0, 1)))).status).toBe(200)
    expect((await node.post(JSON.stringify(RECORDS.slice(1, 2)), { 'x-write-concern': '2' })).status).toBe(200)
    expect((await node.post(JSON.stringify(RECORDS.slice(2, 3)), { 'x-write-concern': ' 0 ' })).status).toBe(200)
    expect(node.replica.writeConcerns).toEqual([undefined, 2, 0])
    for (const bad of ['-1', '17', '1.5', 'all', '']) {
      const res = await node.post(JSON.stringify(RECORDS.slice(3, 4)), { 'x-write-concern': bad })
      expect(res.status, bad).toBe(400)
      expect(res.json.error.code).toBe('HTTP_INVALID_WRITE_CONCERN')
      expect(res.json.error.message).toMatch(/x-write-concern must be a whole number of nodes from 0 to 16/)
    }
    expect(node.replica.batches).toHaveLength(3)
    node.replica.failWrites = new PriceStoreError('PRICE_WRITE_CONCERN_TIMEOUT', 'the stream acknowledged the batch at position 9, and 1 of the 2 nodes applied it')
    const late = await node.post(JSON.stringify(RECORDS.slice(3, 4)), { 'x-write-concern': '2' })
    expect(late.status).toBe(503)
    expect(late.headers.get('retry-after')).toBe('1')
    expect(late.json.error.code).toBe('PRICE_WRITE_CONCERN_TIMEOUT')
    expect(late.json.error.message).toMatch(/it is in the log.*same batch again/)
    node.replica.failWrites = new PriceStoreError('PRICE_REPLICA_FAILED', 'this node stopped applying the stream PRICES (PRICE_REPLICA_DIVERGED: secret internals)')
    const failed = await node.post(JSON.stringify(RECORDS.slice(3, 4)))
    expect(failed.status).toBe(503)
    expect(failed.json.error).toEqual({ code: 'PRICE_REPLICA_FAILED', message: expect.stringMatching(/send it to another node/) })
    expect(failed.json.error.message).not.toMatch(/secret/)
  })

  it('answers PRICE_NOT_OPEN as a single node does', async () => {
    const node = await startNode()
    node.replica.failWrites = new PriceStoreError('PRICE_NOT_OPEN', 'the store is closing')
    const res = await node.post(JSON.stringify(RECORDS.slice(0, 3)))
    expect(res.status).toBe(503)
    expect(res.headers.get('retry-after')).toBe('1')
    expect(res.json.error.code).toBe('PRICE_NOT_OPEN')
  })

  it('answers a bad record exactly as a single node does, and nothing is written', async () => {
    const bad = RECORDS.slice(0, 10).map((record, i) => (i === 7 ? { ...record, value: 'abc' } : record))
    const replicated = await startNode()
    const single = await startNode({ replicated: false })
    for (const [body, type] of [[JSON.stringify(bad), 'application/json'], [`\n${ndjson(bad)}`, 'application/x-ndjson']] as const) {
      const through = await replicated.post(body, { 'content-type': type })
      const direct = await single.post(body, { 'content-type': type })
      expect(through.status).toBe(400)
      expect(through.json).toEqual(direct.json)
      expect(through.json.error).toMatchObject({ code: 'PRICE_INVALID_RECORD', index: 7, field: 'value' })
    }
    expect(replicated.store.position).toBe(0)
  })

  it('keeps the checks before the body: no token, 401; a body that is no batch, 400, and the replica is not called', async () => {
    const node = await startNode()
    expect((await node.post('[]', { authorization: '' })).status).toBe(401)
    const empty = await node.post('[]')
    expect(empty.status).toBe(400)
    expect(empty.json.error.code).toBe('HTTP_INVALID_BODY')
    expect(node.replica.batches).toEqual([])
  })

  it('takes no writes without a write token, replica or not', async () => {
    const node = await startNode({ writes: false })
    const res = await node.post(JSON.stringify(RECORDS.slice(0, 1)))
    expect(res.status).toBe(405)
    expect(res.json.error.code).toBe('HTTP_METHOD_NOT_ALLOWED')
    expect(node.replica.batches).toEqual([])
  })
})
