/**
 * The answers a replicated node adds (issue 21) checked against
 * docs/openapi.yaml: /health and /stats with the replication status, the
 * 503 HTTP_POSITION_NOT_REACHED of reads, and the 503 PRICE_LOG_UNAVAILABLE
 * of writes. A fake replica stands in for a cluster node.
 */
import { readFile } from 'node:fs/promises'
import { parse } from 'yaml'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type RunningServer } from '../../../src/adapters/http/node.js'
import { PriceStoreError, type PriceStore } from '../../../src/index.js'
import { END, demoRecords, openDemoStore } from '../../support/http/demo-server.js'
import { TOKEN } from '../../support/http/write-server.js'
import { checkSchema, resolveRef } from '../../support/http/schema-check.js'
import { FakeReplica } from './replica-fake.js'

type Doc = Record<string, any>
let doc: Doc
let store: PriceStore
let node: RunningServer
let replica: FakeReplica

beforeAll(async () => {
  doc = parse(await readFile(new URL('../../../docs/openapi.yaml', import.meta.url), 'utf8')) as Doc
  ;({ store } = await openDemoStore())
  replica = new FakeReplica(store)
  Object.assign(replica, { position: 1, streamPosition: 4, appliedBatches: 1, appliedRecords: 3_600 })
  node = await startServer({ store, replica, maxLag: 2, minPositionWaitMs: 20, writeToken: TOKEN })
}, 30_000)

afterAll(async () => {
  await node?.close()
  await store?.close()
})

const deref = (node: any): any => (typeof node?.$ref === 'string' ? deref(resolveRef(doc, node.$ref)) : node)

/** Sends a request; checks its status, documented headers and JSON body against the documentation; returns the body. */
async function conforms(target: string, status: number, init: RequestInit = {}): Promise<any> {
  const method = (init.method ?? 'GET').toLowerCase()
  const response = await fetch(`${node.url}${target}`, init)
  const body = await response.text()
  expect(response.status, target).toBe(status)
  const path = new URL(target, node.url).pathname
  const documented = deref(doc.paths[path][method].responses[String(status)])
  expect(documented, `${method} ${path} ${status} is documented`).toBeDefined()
  for (const [name, header] of Object.entries<any>(documented.headers ?? {})) {
    expect(checkSchema(response.headers.get(name), deref(header).schema, doc), `header ${name}`).toEqual([])
  }
  const media = documented.content?.[response.headers.get('content-type')!]
  expect(media, `the content type is documented for ${method} ${path} ${status}`).toBeDefined()
  const json = JSON.parse(body)
  expect(checkSchema(json, media.schema, doc), target).toEqual([])
  return json
}

describe('a replicated node\'s answers conform to docs/openapi.yaml', () => {
  it('/health: 200 with replication; 503 past maxLag and when replication failed', async () => {
    replica.streamPosition = 2
    expect((await conforms('/health', 200)).replication).toMatchObject({ state: 'applying', lag: 1 })
    replica.streamPosition = 4
    expect((await conforms('/health', 503)).reason).toMatch(/maxLag 2/)
    replica.state = 'failed'
    replica.error = { code: 'PRICE_REPLICA_DIVERGED', message: 'the stream no longer holds position 2' }
    expect((await conforms('/health', 503)).replication.error.code).toBe('PRICE_REPLICA_DIVERGED')
    replica.state = 'isolated'
    replica.error = undefined
    replica.heardAgoMs = 4_000
    replica.lastRefused = { position: 3, code: 'PRICE_CORRUPT_VALUE', message: 'the commit at position 3 of PRICES does not decode as a commit' }
    replica.peers = [{ node: 'node-b', position: 4, heardAgoMs: 300 }]
    expect((await conforms('/health', 503)).replication).toMatchObject({ state: 'isolated', heardAgoMs: 4_000, lastRefused: { position: 3 }, peers: [{ node: 'node-b' }] })
    replica.state = 'applying'
    replica.heardAgoMs = undefined
    replica.lastRefused = undefined
    replica.peers = undefined
  })

  it('/stats: 200 with cluster', async () => {
    replica.heardAgoMs = 250
    replica.refusedCommits = 1
    expect((await conforms('/stats', 200)).cluster).toEqual({ stream: 'PRICES', state: 'applying', position: 1, streamPosition: 4, lag: 3, heardAgoMs: 250, refusedCommits: 1 })
    replica.heardAgoMs = undefined
    replica.refusedCommits = 0
  })

  it('reads: 503 HTTP_POSITION_NOT_REACHED with both positions; 400 for a bad minPosition', async () => {
    const from = Math.floor((END - 3_600_000) / 1000)
    for (const target of ['/prices?symbol=BTC', '/prices/export?symbol=BTC', '/stats', `/udf/history?symbol=BTC&resolution=60&from=${from}&to=${from + 3_600}`, '/udf/search?query=B']) {
      const json = await conforms(`${target}${target.includes('?') ? '&' : '?'}minPosition=9`, 503)
      expect(json.error).toMatchObject({ code: 'HTTP_POSITION_NOT_REACHED', position: 1, minPosition: 9 })
    }
    await conforms('/prices?symbol=BTC&minPosition=-9', 400)
    await conforms('/udf/symbols?symbol=BTC&minPosition=x', 400)
  })

  it('POST /prices: 503 PRICE_LOG_UNAVAILABLE', async () => {
    replica.failWrites = new PriceStoreError('PRICE_LOG_UNAVAILABLE', 'the stream did not acknowledge the batch')
    const json = await conforms('/prices', 503, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify(demoRecords().slice(0, 2)),
    })
    expect(json.error.code).toBe('PRICE_LOG_UNAVAILABLE')
  })
})
