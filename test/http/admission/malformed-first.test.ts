/**
 * Issue 23, point 8: a malformed request is answered at once, whatever
 * waits in the query gate. The gate here is full (one slot, taken by a query
 * the store holds until the test lets it go, and a line of one, taken too),
 * and a malformed request of each kind, on every endpoint that reads, must
 * still get its 400 (not a 503, not a wait): asserted by order (every 400
 * comes while the two queries are still held and waiting, and the store has
 * been asked to run only the first), never by time.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type RunningServer } from '../../../src/adapters/http/node.js'
import type { QueryPlan } from '../../../src/engine/query-plan.js'
import type { PriceStore } from '../../../src/index.js'
import { END, openDemoStore } from '../../support/http/demo-server.js'
import { until } from '../../support/http/operations-helpers.js'

/** The demo store's first record time: 2 h of records end at END. */
const START = END - 2 * 3_600_000

/** Every read of `store` held until the test releases it; everything else forwarded to the store itself. */
function holdingReads(store: PriceStore): { store: PriceStore; held: (() => void)[] } {
  const held: (() => void)[] = []
  const wrapper = new Proxy(store, {
    get(target, key) {
      const value: unknown = Reflect.get(target, key, target)
      if (typeof value !== 'function') return value
      if (key === 'run' || key === 'runDeferred') {
        return (plan: QueryPlan) =>
          new Promise((resolve, reject) => held.push(() => (value as (plan: QueryPlan) => Promise<unknown>).call(target, plan).then(resolve, reject)))
      }
      return (value as (...args: unknown[]) => unknown).bind(target)
    },
  })
  return { store: wrapper, held }
}

/** The malformed requests: the load test's four (bench/load), and one of each kind on every endpoint that reads. */
const MALFORMED: readonly (readonly [string, string])[] = [
  // bench/load/load-test.mjs --mix issue12
  ['/prices?symbol=BTC&limit=many', 'PRICE_INVALID_QUERY'],
  [`/prices?symbol=BTC&fromTimestamp=${START}&toTimestamp=${END}&interval=-5`, 'PRICE_INVALID_INTERVAL'],
  ['/prices?symbol=BTC&toTimestamp=yesterday', 'PRICE_INVALID_RANGE'],
  ['/prices?symbol=BTC&symbols=ETH', 'PRICE_INVALID_QUERY'],
  // a range whose ten-minute buckets already pass the cap (maxRangePoints 10 here)
  [`/prices?symbol=BTC&fromTimestamp=${START}&toTimestamp=${END}&interval=600000`, 'PRICE_RANGE_TOO_LARGE'],
  ['/prices?symbol=BTC&minPosition=soon', 'PRICE_INVALID_QUERY'],
  [`/udf/history?symbol=BTC&resolution=7&from=${START / 1000}&to=${END / 1000}`, 'PRICE_INVALID_INTERVAL'],
  [`/udf/history?symbol=BTC&resolution=1&from=${END / 1000}&to=${START / 1000}`, 'PRICE_INVALID_RANGE'],
  ['/udf/history?symbol=BTC&resolution=1', 'PRICE_INVALID_QUERY'],
  ['/udf/symbols?symbol=', 'PRICE_INVALID_SYMBOL'],
  ['/prices/export?from=whenever', 'PRICE_INVALID_RANGE'],
  ['/prices/export?format=xml', 'PRICE_INVALID_QUERY'],
]

let demo: PriceStore
let holding: ReturnType<typeof holdingReads>
let server: RunningServer

beforeAll(async () => {
  ;({ store: demo } = await openDemoStore({ maxRangePoints: 10 }))
  holding = holdingReads(demo)
  // Every query is heavy (lightQueryCost 0): one runs, one waits, and the line is full.
  server = await startServer({ store: holding.store, maxConcurrentQueries: 1, maxQueuedQueries: 1, lightQueryCost: 0, queryTimeoutMs: 0 })
})

afterAll(async () => {
  await server?.close()
  await demo?.close()
})

describe('malformed requests while the query gate is full', () => {
  it('each is answered 400 with its code, while the slot and the line stay taken', async () => {
    const first = fetch(`${server.url}/prices?symbol=BTC`)
    await until(() => holding.held.length === 1, 'the first query runs, held by the store')
    const second = fetch(`${server.url}/prices?symbol=ETH`)
    await until(() => server.queries().queued === 1, 'the second query waits in line')
    // The gate is full: a well-formed heavy query now is refused at once.
    expect((await fetch(`${server.url}/prices?symbol=AR`)).status).toBe(503)
    const answered: string[] = []
    for (const [path, code] of MALFORMED) {
      const response = await fetch(`${server.url}${path}`)
      const body = (await response.json()) as { error?: { code?: string } }
      expect([response.status, body.error?.code], path).toEqual([400, code])
      answered.push(path)
      // Still full, still held: nothing above waited for them.
      expect(server.queries(), path).toMatchObject({ running: 1, queued: 1 })
      expect(holding.held, path).toHaveLength(1)
    }
    expect(answered).toHaveLength(MALFORMED.length)
    holding.held[0]!()
    expect((await first).status).toBe(200)
    await until(() => holding.held.length === 2, 'the second query runs once the first is done')
    holding.held[1]!()
    expect((await second).status).toBe(200)
  })
})
