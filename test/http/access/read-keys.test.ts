import { createHash } from 'node:crypto'
import { MemoryLevel } from 'memory-level'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type RunningServer } from '../../../src/adapters/http/node.js'
import type { AccessLogEntry } from '../../../src/adapters/http/observe/access-log.js'
import type { ReadKeysOptions } from '../../../src/adapters/http/access/read-keys.js'
import { PriceStore } from '../../../src/index.js'
import { TEST_PROVIDER } from '../../../src/testing/records.js'
import { answerOf } from '../../support/http/write-server.js'
import { rec } from '../../support/records.js'

// Read keys over real HTTP: who may read, how much, how late and what, each answer checked against the records
// written here (filtered in the test, not by the code under test).

const sha = (key: string): string => createHash('sha256').update(key, 'utf8').digest('hex')
const MINUTE = 60_000
const now = Date.now()
// Two records a symbol: one two hours old, one a minute old; a reader delayed ten minutes sees only the first.
const written = ['BTC', 'ETH'].flatMap((symbol, index) => [
  rec({ symbol, id: `${symbol}-old`, timestamp: now - 120 * MINUTE, value: 100 + index }),
  rec({ symbol, id: `${symbol}-new`, timestamp: now - MINUTE, value: 200 + index }),
])
const KEYS = { alice: 'alice-secret-1', bob: 'bob-secret-2', carol: 'carol-secret-3', dave: 'dave-secret-4', erin: 'erin-secret-5' }
const readKeys: ReadKeysOptions = {
  anonymous: 'closed',
  keys: [
    { id: 'alice', sha256: sha(KEYS.alice) },
    { id: 'bob', sha256: sha(KEYS.bob), limit: { requests: 2, perSeconds: 3600 } },
    { id: 'carol', sha256: sha(KEYS.carol), delaySeconds: 600 },
    { id: 'dave', sha256: sha(KEYS.dave), symbols: ['BTC'], fields: '-signature' },
    { id: 'erin', sha256: sha(KEYS.erin), limit: { cost: 1, perSeconds: 3600 } },
  ],
}

let store: PriceStore
let server: RunningServer
const log: AccessLogEntry[] = []

beforeAll(async () => {
  store = await PriceStore.open(new MemoryLevel(), { provider: TEST_PROVIDER })
  await store.putMany(written)
  server = await startServer({ store, readKeys, metrics: true, accessLog: (entry) => log.push(entry) })
})
afterAll(async () => {
  await server?.close()
  await store?.close()
})

async function get(path: string, key?: string, header: 'bearer' | 'x-api-key' = 'bearer'): Promise<{ status: number; headers: Headers; text: string; json: any }> {
  const headers: Record<string, string> = key === undefined ? {} : header === 'bearer' ? { authorization: `Bearer ${key}` } : { 'x-api-key': key }
  return answerOf(await fetch(`${server.url}${path}`, { headers }))
}

const ids = (records: readonly { id: string }[]): string[] => records.map((record) => record.id)

describe('read keys over HTTP', () => {
  it('refuses a reader without a key (anonymous closed) and an unknown key with 401, quoting neither', async () => {
    const none = await get('/prices?symbol=BTC')
    expect(none.status).toBe(401)
    expect(none.json.error.code).toBe('HTTP_UNAUTHORIZED')
    expect(none.headers.get('www-authenticate')).toBe('Bearer realm="price-store"')
    const unknown = await get('/prices?symbol=BTC', 'not-a-key-of-this-server')
    expect(unknown.status).toBe(401)
    expect(unknown.text).not.toContain('not-a-key-of-this-server')
    expect(unknown.text).not.toContain(sha('not-a-key-of-this-server'))
    // Health and the OpenAPI document are not metered.
    expect((await get('/health')).status).toBe(200)
  })

  it('lets a known key read, by bearer token or x-api-key', async () => {
    for (const header of ['bearer', 'x-api-key'] as const) {
      const answer = await get('/prices?symbol=BTC&limit=10', KEYS.alice, header)
      expect(answer.status).toBe(200)
      expect(ids(answer.json)).toEqual(['BTC-new', 'BTC-old'])
    }
  })

  it('throttles a key over its request budget with 429 and retry-after, while other keys read on', async () => {
    expect((await get('/prices?symbol=BTC', KEYS.bob)).status).toBe(200)
    expect((await get('/prices?symbol=ETH', KEYS.bob)).status).toBe(200)
    const third = await get('/prices?symbol=BTC', KEYS.bob)
    expect(third.status).toBe(429)
    expect(third.json.error.code).toBe('HTTP_RATE_LIMITED')
    // Two requests an hour: the next token comes in half an hour.
    expect(Number(third.headers.get('retry-after'))).toBeGreaterThan(1700)
    expect((await get('/prices?symbol=BTC', KEYS.alice)).status).toBe(200)
  })

  it('throttles a key over its cost budget: the first query runs into debt, the next waits', async () => {
    const first = await get('/prices?symbol=BTC&limit=2', KEYS.erin)
    expect(first.status).toBe(200)
    const second = await get('/prices?symbol=BTC', KEYS.erin)
    expect(second.status).toBe(429)
    expect(second.json.error.message).toContain('query cost')
  })

  it('shows a delayed key only records older than its delay, on every form', async () => {
    const visible = written.filter((record) => record.timestamp <= Date.now() - 600_000)
    const of = (symbol: string) => visible.filter((record) => record.symbol === symbol).map((record) => record.id).reverse()
    expect(ids((await get('/prices?symbol=BTC&limit=10', KEYS.carol)).json)).toEqual(of('BTC'))
    const several = (await get('/prices?symbols=BTC,ETH', KEYS.carol)).json
    expect(Object.fromEntries(Object.entries(several).map(([symbol, record]) => [symbol, (record as { id: string }).id]))).toEqual({ BTC: 'BTC-old', ETH: 'ETH-old' })
    const range = (await get(`/prices?symbol=ETH&fromTimestamp=${now - 200 * MINUTE}&toTimestamp=${now + MINUTE}&interval=1`, KEYS.carol)).json
    expect(ids(range)).toEqual(['ETH-old'])
    const batch = (await get(`/prices/batch?symbols=BTC&times=${now}`, KEYS.carol)).json
    expect(batch.BTC[String(now)].record.id).toBe('BTC-old')
    const exported = (await get('/prices/export?symbol=BTC', KEYS.carol)).text.trim().split('\n').map((line) => JSON.parse(line) as { id: string })
    expect(ids(exported)).toEqual(of('BTC').reverse())
    expect((await get(`/prices/export?from=${now - MINUTE * 5}`, KEYS.carol)).text).toBe('')
    // The same requests by an undelayed key see the newest.
    expect(ids((await get('/prices?symbol=BTC&limit=10', KEYS.alice)).json)).toEqual(['BTC-new', 'BTC-old'])
    // An endpoint that answers from every record refuses a scoped reader.
    const stats = await get('/stats', KEYS.carol)
    expect(stats.status).toBe(403)
    expect(stats.json.error.code).toBe('HTTP_FORBIDDEN')
    expect((await get('/stats', KEYS.alice)).status).toBe(200)
  })

  it('keeps a key to its symbols (403 for another) and hides the fields it masks', async () => {
    const other = await get('/prices?symbol=ETH', KEYS.dave)
    expect(other.status).toBe(403)
    expect(other.json.error.message).toContain('ETH')
    expect((await get('/prices?symbols=BTC,ETH', KEYS.dave)).status).toBe(403)
    const [latest] = (await get('/prices?symbol=BTC', KEYS.dave)).json
    expect(latest.id).toBe('BTC-new')
    expect(latest).not.toHaveProperty('signature')
    expect(latest).toHaveProperty('value', 200)
    // Asking for every symbol gives its own only.
    expect(Object.keys((await get('/prices?symbols=', KEYS.dave)).json ?? {})).not.toContain('ETH')
    // A request's own selection is narrowed, not widened; keeping only masked fields is refused.
    const [narrow] = (await get('/prices?symbol=BTC&fields=id,signature', KEYS.dave)).json
    expect(narrow).toEqual({ id: 'BTC-new' })
    expect((await get('/prices?symbol=BTC&fields=signature', KEYS.dave)).status).toBe(403)
    const batch = (await get(`/prices/batch?symbols=BTC&times=${now}`, KEYS.dave)).json
    expect(batch.BTC[String(now)].record).not.toHaveProperty('signature')
    const exported = (await get('/prices/export', KEYS.dave)).text.trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>)
    expect(exported.map((record) => record.id)).toEqual(['BTC-old', 'BTC-new'])
    for (const record of exported) expect(record).not.toHaveProperty('signature')
    expect((await get('/prices/export?symbol=ETH', KEYS.dave)).status).toBe(403)
    expect((await get(`/udf/history?symbol=ETH&resolution=60&from=0&to=${Math.floor(now / 1000)}`, KEYS.dave)).status).toBe(403)
  })

  it('counts each key in /metrics by id, and logs its id, never a key', async () => {
    const text = (await get('/metrics')).text
    expect(text).toMatch(/price_store_read_requests_total\{reader="bob",outcome="throttled"\} 1\b/)
    expect(text).toMatch(/price_store_read_requests_total\{reader="dave",outcome="refused"\} [1-9]/)
    expect(text).toMatch(/price_store_read_unknown_total [1-9]/)
    for (const key of Object.values(KEYS)) expect(text).not.toContain(key)
    // A key sent in a query string is never read, and never logged.
    const leaked = await get(`/prices?symbol=BTC&api_key=${KEYS.alice}`)
    expect(leaked.status).toBe(401)
    await new Promise((resolve) => setTimeout(resolve, 50))
    const lines = JSON.stringify(log)
    for (const key of Object.values(KEYS)) expect(lines).not.toContain(key)
    expect(log.some((entry) => entry.reader === 'bob')).toBe(true)
    expect(log.some((entry) => entry.query.includes('api_key=REDACTED'))).toBe(true)
  })
})

describe('read keys: bad configuration', () => {
  const cases: readonly [string, unknown, string][] = [
    ['not an object', 'keys', 'readKeys'],
    ['a short digest', { keys: [{ id: 'a', sha256: 'abc' }] }, 'readKeys.keys[0].sha256'],
    ['a repeated id', { keys: [{ id: 'a', sha256: sha('1') }, { id: 'a', sha256: sha('2') }] }, 'readKeys.keys[1].id'],
    ['the anonymous id', { keys: [{ id: 'anonymous', sha256: sha('1') }] }, 'readKeys.keys[0].id'],
    ['a zero rate', { keys: [{ id: 'a', sha256: sha('1'), limit: { requests: 0 } }] }, 'readKeys.keys[0].limit.requests'],
    ['an unknown setting', { keys: [{ id: 'a', sha256: sha('1'), rate: 5 }] }, 'readKeys.keys[0].rate'],
    ['a bad fields mask', { keys: [{ id: 'a', sha256: sha('1'), fields: 'nope' }] }, 'readKeys.keys[0].fields'],
    ['a negative delay', { keys: [{ id: 'a', sha256: sha('1'), delaySeconds: -1 }] }, 'readKeys.keys[0].delaySeconds'],
    ['a bad anonymous tier', { keys: [], anonymous: 'maybe' }, 'readKeys.anonymous'],
  ]
  it.each(cases)('refuses %s with PRICE_INVALID_OPTIONS naming the field', async (_, readKeys, field) => {
    const error = await startServer({ store, readKeys: readKeys as never }).then(async (running) => {
      await running.close()
      return undefined
    }, (err: unknown) => err)
    expect(error).toMatchObject({ code: 'PRICE_INVALID_OPTIONS', details: { field } })
  })
})
