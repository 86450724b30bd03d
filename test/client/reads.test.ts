/**
 * One-shot reads with failover, on fake transports and a fake clock: a node that fails is passed over for the
 * next, the client stays with the one that answered, a node's 4xx is the caller's error with its code, and once
 * every round failed the error lists each node's last failure. Pauses and timeouts run on the injected clock.
 */
import { describe, expect, it } from 'vitest'
import { PriceClient, isPriceClientError, type PriceClientError } from '../../src/client.js'
import { FakeClock, PausingClock, fakeFetch } from './fakes.js'

const A = 'http://a.test:9000'
const B = 'http://b.test:9000/v1'
const C = 'http://c.test:9000'
const RECORD = { id: 'r', symbol: 'BTC', value: 1.5, timestamp: 1 }
const refused = (): never => {
  throw Object.assign(new TypeError('fetch failed'), { cause: { code: 'ECONNREFUSED' } })
}
const errorOf = async (promise: Promise<unknown>): Promise<PriceClientError> => {
  try {
    await promise
  } catch (err) {
    if (isPriceClientError(err)) return err
    throw err
  }
  throw new Error('no error')
}

describe('PriceClient reads', () => {
  it('passes over a node that refuses, and stays with the one that answered', async () => {
    const fetch = fakeFetch((url) => (url.startsWith(A) ? refused() : [200, [RECORD]]))
    const client = new PriceClient({ nodes: [A, `${B}/`, C], fetch, timers: new PausingClock() })
    expect(client.nodes).toEqual([A, B, C])
    expect(await client.latest('BTC')).toEqual(RECORD)
    expect(client.node).toBe(B)
    expect(await client.query({ symbols: ['BTC', 'ETH'], limit: 2, fields: undefined })).toEqual([RECORD])
    expect(fetch.urls).toEqual([`${A}/prices?symbol=BTC`, `${B}/prices?symbol=BTC`, `${B}/prices?symbols=BTC%2CETH&limit=2`])
  })

  it('sends fields, minPosition and URLSearchParams as given', async () => {
    const seen: (string | null)[] = []
    const fetch = fakeFetch((_url, init) => {
      seen.push(new Headers(init?.headers).get('x-min-position'))
      return [200, []]
    })
    const client = new PriceClient({ nodes: [A], fetch })
    expect(await client.latest('ETH', { fields: ['symbol', 'value'], minPosition: 41 })).toBeUndefined()
    await client.query(new URLSearchParams({ symbol: 'AR', limit: '3' }))
    expect(fetch.urls).toEqual([`${A}/prices?symbol=ETH&fields=symbol%2Cvalue`, `${A}/prices?symbol=AR&limit=3`])
    expect(seen).toEqual(['41', null])
  })

  it('tries another node on a 503 and a 500, and hands a 4xx to the caller with the node\'s own code', async () => {
    const answers: Record<string, readonly [number, unknown]> = {
      [A]: [503, { error: { code: 'HTTP_BUSY', message: 'busy' } }],
      [B]: [500, 'not json'],
      [C]: [400, { error: { code: 'PRICE_INVALID_SYMBOL', message: 'bad symbol "B C"' } }],
    }
    const fetch = fakeFetch((url) => answers[[A, B, C].find((node) => url.startsWith(node))!]!)
    const client = new PriceClient({ nodes: [A, B, C], fetch })
    const error = await errorOf(client.latest('B C'))
    expect(error).toMatchObject({ code: 'PRICE_INVALID_SYMBOL', message: 'bad symbol "B C"', details: { node: C, status: 400 } })
    expect(fetch.urls).toHaveLength(3)
  })

  it('gives PRICE_CLIENT_NO_NODE after its rounds, pausing between them with jittered exponential backoff', async () => {
    let n = 0
    const fetch = fakeFetch((url) => (url.startsWith(A) ? refused() : [503, { error: { code: 'PRICE_NOT_OPEN', message: `closed ${n++}` } }]))
    const clock = new PausingClock()
    const client = new PriceClient({ nodes: [A, B], fetch, timers: clock, random: () => 0.5, retry: { rounds: 4, baseDelayMs: 100, maxDelayMs: 300 } })
    const error = await errorOf(client.query({ symbol: 'BTC' }))
    expect(error.code).toBe('PRICE_CLIENT_NO_NODE')
    expect(error.details.nodes).toEqual([
      { node: A, code: 'PRICE_CLIENT_NETWORK', message: 'fetch failed (ECONNREFUSED)' },
      { node: B, code: 'PRICE_NOT_OPEN', message: 'closed 3', status: 503 },
    ])
    expect(fetch.urls).toHaveLength(8)
    // One request timeout per request (10 s by default), and a pause before each round but the first: 75, 150, 225.
    expect(clock.delays().filter((ms) => ms !== 10_000)).toEqual([75, 150, 225])
  })

  it('bounds each request by requestTimeoutMs, then tries the next node', async () => {
    const clock = new FakeClock()
    const fetch = fakeFetch((url, init) => url.startsWith(A)
      ? new Promise((_resolve, reject) => init!.signal!.addEventListener('abort', () => reject(new DOMException('aborted', 'AbortError'))))
      : [200, [RECORD]])
    const client = new PriceClient({ nodes: [A, B], fetch, timers: clock, requestTimeoutMs: 1_234 })
    const answer = client.latest('BTC')
    await new Promise((resolve) => setImmediate(resolve))
    expect(clock.fire(1_234)).toBe(1)
    expect(await answer).toEqual(RECORD)
    expect(client.node).toBe(B)
  })

  it('stops on the caller\'s signal with PRICE_ABORTED, during a request or a pause', async () => {
    const clock = new FakeClock()
    const fetch = fakeFetch((url, init) => url.startsWith(A)
      ? new Promise((_resolve, reject) => init!.signal!.addEventListener('abort', () => reject(new DOMException('aborted', 'AbortError'))))
      : refused())
    const client = new PriceClient({ nodes: [A], fetch, timers: clock })
    const controller = new AbortController()
    const answer = errorOf(client.latest('BTC', { signal: controller.signal }))
    await new Promise((resolve) => setImmediate(resolve))
    controller.abort()
    expect((await answer).code).toBe('PRICE_ABORTED')

    const pausing = new PriceClient({ nodes: [B], fetch, timers: clock })
    const second = new AbortController()
    const paused = errorOf(pausing.latest('BTC', { signal: second.signal }))
    await new Promise((resolve) => setImmediate(resolve))
    // Refused once; waiting for the second round now.
    expect(fetch.urls.filter((url) => url.startsWith(B))).toHaveLength(1)
    second.abort()
    expect((await paused).code).toBe('PRICE_ABORTED')
    expect(fetch.urls.filter((url) => url.startsWith(B))).toHaveLength(1)
  })

  it('tries a node that answered 200 with something that is not JSON as failed', async () => {
    const fetch = fakeFetch((url) => (url.startsWith(A) ? [200, '<html>'] : [200, [RECORD]]))
    const client = new PriceClient({ nodes: [A, B], fetch })
    expect(await client.latest('BTC')).toEqual(RECORD)
  })

  it('refuses options it cannot use, with PRICE_CLIENT_INVALID_OPTIONS', () => {
    for (const options of [{ nodes: [] }, { nodes: ['ftp://x'] }, { nodes: ['not a url'] }, { nodes: [A], retry: { rounds: 0 } }, { nodes: [A], requestTimeoutMs: -1 }]) {
      expect(() => new PriceClient(options), JSON.stringify(options)).toThrow(expect.objectContaining({ code: 'PRICE_CLIENT_INVALID_OPTIONS' }))
    }
    // Node 20 has no global WebSocket: subscribe says so.
    const client = new PriceClient({ nodes: [A] })
    if ((globalThis as { WebSocket?: unknown }).WebSocket === undefined) {
      expect(() => client.subscribe(['BTC'])).toThrow(expect.objectContaining({ code: 'PRICE_CLIENT_INVALID_OPTIONS', details: { parameter: 'WebSocket' } }))
    }
    expect(() => client.subscribe([])).toThrow(expect.objectContaining({ code: 'PRICE_CLIENT_INVALID_OPTIONS' }))
  })
})
