/**
 * One client cannot starve the others (issue 5): request timeouts, a cap on
 * heavy queries at once, a bounded line of waiting ones, and a time budget
 * per query. Deterministic: the store is a stub whose queries wait on
 * promises the test settles, and the test waits for the server's own
 * counters (`RunningServer.queries()`) instead of sleeping. The only timers
 * are the server's timeouts (a few hundred ms) and the 10 s bound that turns
 * a hang into a failure; nothing asserts on how long anything took.
 */
import { readFile } from 'node:fs/promises'
import { afterEach, describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { answerPrices, answerToJsonInSlices } from '../../src/adapters/http/prices/answer.js'
import { startServer, type RunningServer } from '../../src/adapters/http/node.js'
import { planQuery } from '../../src/engine/plan.js'
import type { QueryPlan } from '../../src/engine/query-plan.js'
import { parseQuery } from '../../src/engine/parse-query.js'
import { requestErrorLogger } from '../../src/cli/serve-command.js'
import { DEFAULT_LIMITS, PriceStoreError, isPriceStoreError, type PriceAnswer, type PriceRecord, type QueryParams } from '../../src/index.js'
import { answerToJson } from '../../src/http.js'
import { runCli } from '../../src/cli/run-cli.js'
import { memoryIo, run, tempDir } from '../cli/helpers.js'
import { checkSchema, resolveRef } from '../support/http/schema-check.js'
import { exchange, openConnection, type RawAnswer, type RawConnection } from './http-raw.js'

const JSON_TYPE = 'application/json; charset=utf-8'

interface Call {
  readonly params: URLSearchParams
  resolve(answer: PriceAnswer): void
  reject(err: unknown): void
  settled: boolean
}

const CONFIG = { provider: { name: 'redstone', id: 'I-5rWUehEv-MjdK9gFw09RxfSLQX9DIHxG614Wf8qo0', publicKey: 'key' }, limits: DEFAULT_LIMITS }

/** The plan a store with the default limits makes of a parameter set. */
function planOf(query: string): QueryPlan {
  return planQuery(parseQuery(new URLSearchParams(query), CONFIG), DEFAULT_LIMITS.maxRangePoints)
}

/**
 * A store whose queries wait until the test settles them (light ones too,
 * unless `autoLight`). It makes plans as a store does, so the gate reads
 * their cost.
 */
function controlledStore(options: { autoLight?: boolean } = {}) {
  const calls: Call[] = []
  const paramsOf = new WeakMap<QueryPlan, URLSearchParams>()
  let wake: (() => void) | undefined
  const store = {
    plan(params: QueryParams): QueryPlan {
      const plan = planQuery(parseQuery(params, CONFIG), DEFAULT_LIMITS.maxRangePoints)
      paramsOf.set(plan, new URLSearchParams(params as URLSearchParams))
      return plan
    },
    run(plan: QueryPlan): Promise<PriceAnswer> {
      if (options.autoLight === true && !plan.heavy) return Promise.resolve([])
      return store.query(paramsOf.get(plan)!)
    },
    query(params: QueryParams): Promise<PriceAnswer> {
      const copy = new URLSearchParams(params as URLSearchParams)
      return new Promise<PriceAnswer>((resolve, reject) => {
        const call: Call = {
          params: copy,
          settled: false,
          resolve: (answer) => {
            call.settled = true
            resolve(answer)
          },
          reject: (err) => {
            call.settled = true
            reject(err)
          },
        }
        calls.push(call)
        wake?.()
      })
    },
  }
  return {
    store,
    calls,
    /** Resolves once the store has been called `count` times in all. */
    async calledTimes(count: number): Promise<void> {
      while (calls.length < count) {
        await new Promise<void>((resolve) => {
          wake = resolve
        })
      }
    },
    /** The one call asking for `name=value`. */
    call(name: string, value: string): Call {
      const found = calls.filter((call) => call.params.get(name) === value)
      expect(found, `calls with ${name}=${value}`).toHaveLength(1)
      return found[0]!
    },
  }
}

/** Waits (by polling the server's counters, never by sleeping a fixed time) until `check` holds. */
async function until(running: RunningServer, check: (load: ReturnType<RunningServer['queries']>) => boolean): Promise<void> {
  while (!check(running.queries())) await new Promise((resolve) => setTimeout(resolve, 5))
}

function get(query: string): string {
  return `GET /prices?${query} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`
}

/** A heavy query (the range form) tagged `name` in its `symbol`. */
function heavy(name: string): string {
  return `symbol=${name}&fromTimestamp=0&toTimestamp=9&interval=1`
}

async function answerOf(pending: Promise<Awaited<ReturnType<typeof exchange>>>): Promise<RawAnswer> {
  const result = await pending
  expect(result.kind).toBe('answer')
  return result as RawAnswer
}

function expectError(answer: RawAnswer, status: number, code: string): void {
  expect(answer.status).toBe(status)
  expect(answer.headers['content-type']).toBe(JSON_TYPE)
  expect(JSON.parse(answer.body)).toEqual({ error: { code, message: expect.any(String) } })
  if (status === 503) expect(answer.headers['retry-after']).toBe('1')
}

const servers: RunningServer[] = []
const connections: RawConnection[] = []

async function serve(options: Omit<Parameters<typeof startServer>[0], 'host' | 'port'>): Promise<RunningServer> {
  const running = await startServer(options)
  servers.push(running)
  return running
}

afterEach(async () => {
  for (const connection of connections.splice(0)) connection.destroy()
  for (const running of servers.splice(0)) {
    running.server.closeAllConnections()
    await running.close()
  }
})

describe('which queries are heavy: read from the plan', () => {
  it.each([
    ['symbol=BTC', false],
    ['symbol=BTC&limit=100', false],
    ['symbol=BTC&limit=60&offset=40', false],
    ['symbol=BTC&fromTimestamp=0&toTimestamp=9', false],
    ['symbol=BTC&toTimestamp=9&direction=nearest', false],
    ['symbol=BTC&toTimestamp=9&direction=after&tolerance=5', false],
    ['symbol=BTC&limit=101', true],
    ['symbol=BTC&offset=100', true],
    ['symbol=BTC&fromTimestamp=0&toTimestamp=9&interval=1', true],
    ['symbol=BTC&fromTimestamp=0&toTimestamp=9&interval=1&aggregate=candles', true],
    ['symbol=BTC&fromTimestamp=0&toTimestamp=9&aggregate=twap', true],
    ['symbols=BTC', false],
    ['symbols=BTC,ETH&toTimestamp=9&direction=nearest', false],
    [`symbols=${Array.from({ length: 100 }, (_, i) => `S${i}`).join(',')}`, false],
    [`symbols=${Array.from({ length: 101 }, (_, i) => `S${i}`).join(',')}`, true],
    [`symbols=${Array.from({ length: 51 }, (_, i) => `S${i}`).join(',')}&toTimestamp=9&direction=nearest`, true], // two seeks each
    ['', true],
    ['provider=redstone', true],
    ['toTimestamp=5', true],
  ])('%s → heavy: %s', (query, heavy) => {
    expect(planOf(query).heavy).toBe(heavy)
  })

  it('a malformed query is answered at once with its 400, without waiting behind heavy ones', async () => {
    const stub = controlledStore()
    const running = await serve({ store: stub.store, maxConcurrentQueries: 1, maxQueuedQueries: 1, queryTimeoutMs: 0 })
    const a = exchange(running.url, get(heavy('A')))
    const b = exchange(running.url, get(heavy('B')))
    await until(running, (load) => load.running === 1 && load.queued === 1)
    for (const query of ['symbol=BTC&limit=abc', 'symbol=BTC&limit=1&limit=2', 'symbols=A&symbols=B', 'symbol=BTC&offset=99999999999999999999']) {
      expect((await answerOf(exchange(running.url, get(query)))).status).toBe(400)
    }
    expect(stub.calls).toHaveLength(1)
    stub.calls[0]!.resolve([])
    await stub.calledTimes(2)
    stub.calls[1]!.resolve([])
    expect((await answerOf(a)).status).toBe(200)
    expect((await answerOf(b)).status).toBe(200)
  })
})

describe('a cap on heavy queries at once, and a bounded line', () => {
  it('past the cap, heavy queries wait in line; past the line, 503 HTTP_BUSY at once; light lookups never wait', async () => {
    const stub = controlledStore()
    const errors: unknown[] = []
    const running = await serve({ store: stub.store, maxConcurrentQueries: 2, maxQueuedQueries: 1, queryTimeoutMs: 0, onError: (err) => errors.push(err) })
    const a = exchange(running.url, get(heavy('A')))
    const b = exchange(running.url, get(heavy('B')))
    await stub.calledTimes(2)
    expect(running.queries()).toMatchObject({ running: 2, queued: 0 })

    const c = exchange(running.url, get(heavy('C')))
    await until(running, (load) => load.queued === 1)
    expect(stub.calls).toHaveLength(2) // C waits, unread

    // The line is full: refused at once, while A and B still run.
    const d = await answerOf(exchange(running.url, get(heavy('D'))))
    expectError(d, 503, 'HTTP_BUSY')
    expect(running.queries()).toMatchObject({ running: 2, queued: 1, refused: 1 })
    expect(errors).toEqual([expect.objectContaining({ name: 'QueryLimitError', code: 'HTTP_BUSY' })])

    // A light lookup (latest-N of one symbol) is not held behind them.
    const light = exchange(running.url, get('symbol=BTC&limit=5'))
    await stub.calledTimes(3)
    stub.call('symbol', 'BTC').resolve([])
    const lightAnswer = await answerOf(light)
    expect(lightAnswer.status).toBe(200)
    expect(lightAnswer.body).toBe('[]')

    // A ends: its slot goes to C, the longest waiting.
    stub.call('symbol', 'A').resolve([])
    expect((await answerOf(a)).status).toBe(200)
    await stub.calledTimes(4)
    expect(stub.calls[3]!.params.get('symbol')).toBe('C')
    stub.call('symbol', 'B').resolve({})
    stub.call('symbol', 'C').resolve({})
    expect((await answerOf(b)).body).toBe('{}')
    expect((await answerOf(c)).body).toBe('{}')
    expect(running.queries()).toEqual({ running: 0, sending: 0, queued: 0, refused: 1, timedOut: 0 })
    expect(stub.calls.map((call) => call.params.get('symbol'))).not.toContain('D') // never ran
  })

  it('waiting queries are admitted first come, first served', async () => {
    const stub = controlledStore()
    const running = await serve({ store: stub.store, maxConcurrentQueries: 1, maxQueuedQueries: 3, queryTimeoutMs: 0 })
    const first = exchange(running.url, get(heavy('Q0')))
    await stub.calledTimes(1)
    const waiting = []
    for (let i = 1; i <= 3; i++) {
      waiting.push(exchange(running.url, get(heavy(`Q${i}`))))
      await until(running, (load) => load.queued === i)
    }
    for (let i = 0; i <= 3; i++) {
      await stub.calledTimes(i + 1)
      expect(stub.calls).toHaveLength(i + 1) // one at a time: the cap is 1
      expect(stub.calls[i]!.params.get('symbol')).toBe(`Q${i}`)
      stub.calls[i]!.resolve([])
    }
    for (const pending of [first, ...waiting]) expect((await answerOf(pending)).status).toBe(200)
  })

  it('a query whose client leaves while it waits is dropped without running', async () => {
    const stub = controlledStore()
    const running = await serve({ store: stub.store, maxConcurrentQueries: 1, maxQueuedQueries: 2, queryTimeoutMs: 0 })
    const first = exchange(running.url, get(heavy('FIRST')))
    await stub.calledTimes(1)
    const leaving = await openConnection(running.url)
    leaving.write(get(heavy('LEAVER')))
    await until(running, (load) => load.queued === 1)
    leaving.destroy()
    await until(running, (load) => load.queued === 0)
    const third = exchange(running.url, get(heavy('THIRD')))
    await until(running, (load) => load.queued === 1)
    stub.calls[0]!.resolve([])
    await stub.calledTimes(2)
    expect(stub.calls.map((call) => call.params.get('symbol'))).toEqual(['FIRST', 'THIRD'])
    stub.calls[1]!.resolve([])
    expect((await answerOf(first)).status).toBe(200)
    expect((await answerOf(third)).status).toBe(200)
    expect(running.queries().refused).toBe(0) // leaving is not refusing
  })

  it('one client flooding heavy queries on one pipelined connection: the flood is capped and refused, other clients are still answered', async () => {
    const stub = controlledStore({ autoLight: true })
    const running = await serve({ store: stub.store, maxConcurrentQueries: 2, maxQueuedQueries: 4, queryTimeoutMs: 0 })
    const flood = await openConnection(running.url)
    connections.push(flood)
    const FLOOD = 40
    // Node runs pipelined requests of one connection concurrently; the gate still caps them.
    flood.write(Array.from({ length: FLOOD }, (_, i) => get(`symbol=X&fromTimestamp=0&toTimestamp=9&interval=1&n=${i}`)).join(''))
    await until(running, (load) => load.running === 2 && load.queued === 4 && load.refused === FLOOD - 6)
    expect(stub.calls).toHaveLength(2)

    // Others: light lookups are answered while the flood holds every heavy slot.
    for (let i = 0; i < 5; i++) {
      const other = await answerOf(exchange(running.url, get(`symbol=BTC&limit=${i + 1}`)))
      expect(other.status).toBe(200)
    }

    // The flood ends; every one of its requests got an answer, in order.
    for (let settled = 0; settled < 6; settled++) {
      await stub.calledTimes(settled + 1)
      stub.calls[settled]!.resolve([])
    }
    const statuses: number[] = []
    for (let i = 0; i < FLOOD; i++) {
      const answer = await flood.next()
      if (answer.status === 503) expectError(answer, 503, 'HTTP_BUSY')
      statuses.push(answer.status)
    }
    expect(statuses.filter((status) => status === 200)).toHaveLength(6)
    expect(statuses.filter((status) => status === 503)).toHaveLength(FLOOD - 6)
    expect(running.queries()).toMatchObject({ running: 0, queued: 0 })
  })
})

describe('docs/openapi.yaml', () => {
  it('documents the 503 answers HTTP_BUSY and HTTP_QUERY_TIMEOUT, retry-after included', async () => {
    const doc = parse(await readFile(new URL('../../docs/openapi.yaml', import.meta.url), 'utf8')) as Record<string, any>
    const documented = resolveRef(doc, doc.paths['/prices'].get.responses['503'].$ref) as Record<string, any>
    const stub = controlledStore()
    const running = await serve({ store: stub.store, maxConcurrentQueries: 1, maxQueuedQueries: 0, queryTimeoutMs: 300 })
    const timedOut = await answerOf(exchange(running.url, get(heavy('A'))))
    const busy = await answerOf(exchange(running.url, get(heavy('B'))))
    for (const [answer, code] of [[timedOut, 'HTTP_QUERY_TIMEOUT'], [busy, 'HTTP_BUSY']] as const) {
      expectError(answer, 503, code)
      for (const name of Object.keys(documented.headers)) expect(answer.headers[name], name).toBeTruthy()
      expect(checkSchema(JSON.parse(answer.body), documented.content[JSON_TYPE].schema, doc)).toEqual([])
    }
    stub.calls[0]!.resolve([])
  })
})

describe('a time budget per query', () => {
  it('a query past its budget gets 503 HTTP_QUERY_TIMEOUT; it keeps its slot until the store is done, and its late answer is dropped', async () => {
    const stub = controlledStore()
    const errors: unknown[] = []
    const running = await serve({ store: stub.store, maxConcurrentQueries: 1, maxQueuedQueries: 1, queryTimeoutMs: 300, onError: (err) => errors.push(err) })
    const connection = await openConnection(running.url)
    connections.push(connection)

    const slow = await connection.request(get(heavy('SLOW')))
    expectError(slow, 503, 'HTTP_QUERY_TIMEOUT')
    expect(errors).toEqual([expect.objectContaining({ code: 'HTTP_QUERY_TIMEOUT' })])
    // The store is still reading for it: the slot stays taken.
    expect(running.queries()).toMatchObject({ running: 1, timedOut: 1 })

    // So the next heavy query waits, and its budget runs out while it waits: HTTP_BUSY, never run.
    const waited = await connection.request(get(heavy('WAITED')))
    expectError(waited, 503, 'HTTP_BUSY')
    expect(stub.calls).toHaveLength(1)

    // The store finally answers the slow query: nothing is sent for it, and the slot is free again.
    stub.calls[0]!.resolve([])
    await until(running, (load) => load.running === 0)
    const next = connection.request(get(heavy('NEXT')))
    await stub.calledTimes(2)
    stub.calls[1]!.resolve({})
    const nextAnswer = await next
    expect(nextAnswer.status).toBe(200)
    expect(nextAnswer.body).toBe('{}') // its own answer, not the slow query's late '[]'
    expect(connection.pending()).toBe(0)
  })

  it('light lookups have the same budget', async () => {
    const stub = controlledStore()
    const running = await serve({ store: stub.store, queryTimeoutMs: 200 })
    const answer = await answerOf(exchange(running.url, get('symbol=BTC')))
    expectError(answer, 503, 'HTTP_QUERY_TIMEOUT')
    expect(running.queries()).toMatchObject({ running: 0, timedOut: 1 })
    stub.calls[0]!.reject(new Error('late failure'))
  })

  it('a HEAD past its budget: the same status and headers, no body', async () => {
    const stub = controlledStore()
    const running = await serve({ store: stub.store, queryTimeoutMs: 200 })
    const answer = await answerOf(exchange(running.url, `HEAD /prices?symbols=A HTTP/1.1\r\nHost: x\r\n\r\n`, { head: true }))
    expect(answer.status).toBe(503)
    expect(answer.headers['retry-after']).toBe('1')
    expect(Number(answer.headers['content-length'])).toBeGreaterThan(0)
    expect(answer.body).toBe('')
    stub.calls[0]!.resolve([])
  })

  it('a graceful close after a timed-out query completes once the store is done with it', async () => {
    const stub = controlledStore()
    const running = await serve({ store: stub.store, queryTimeoutMs: 200 })
    const answer = await answerOf(exchange(running.url, get(heavy('A'))))
    expectError(answer, 503, 'HTTP_QUERY_TIMEOUT')
    const closing = running.close()
    stub.calls[0]!.resolve([])
    await closing
  })
})

describe('request timeouts: a slow or stalled request is ended, not held forever', () => {
  it('headers that never end get 408 HTTP_REQUEST_TIMEOUT and a closed connection; other clients are served meanwhile', async () => {
    const stub = controlledStore({ autoLight: true })
    const running = await serve({ store: stub.store, headersTimeoutMs: 300, requestTimeoutMs: 600 })
    const stalled = exchange(running.url, 'GET /prices?symbol=BTC HTTP/1.1\r\nHost: x\r\nX-Slow: 1\r\n')
    expect((await answerOf(exchange(running.url, get('symbol=BTC')))).status).toBe(200)
    const answer = await answerOf(stalled) // exchange reads an answer with `connection: close` to the close
    expectError(answer, 408, 'HTTP_REQUEST_TIMEOUT')
    expect(answer.headers.connection).toBe('close')
  })

  it('a client trickling its headers a byte at a time is cut off too (the timeout is for the whole head, not between bytes)', async () => {
    const stub = controlledStore({ autoLight: true })
    const running = await serve({ store: stub.store, headersTimeoutMs: 300, requestTimeoutMs: 600 })
    const connection = await openConnection(running.url)
    connections.push(connection)
    const text = `GET /prices?symbol=BTC HTTP/1.1\r\nHost: x\r\nX-Pad: ${'p'.repeat(10_000)}\r\n\r\n`
    let sent = 0
    let closed = false
    void connection.closed.then(() => {
      closed = true
    })
    // At one byte per 5 ms the head would take 50 s; the server ends it long before.
    while (!closed && sent < text.length) {
      connection.write(text[sent++]!)
      await new Promise((resolve) => setTimeout(resolve, 5))
    }
    expect(closed).toBe(true)
    expect(sent).toBeLessThan(text.length)
    const answer = await connection.next()
    expectError(answer, 408, 'HTTP_REQUEST_TIMEOUT')
  })

  it('a body that never arrives: the request is answered, then the connection is ended', async () => {
    const stub = controlledStore({ autoLight: true })
    const running = await serve({ store: stub.store, headersTimeoutMs: 300, requestTimeoutMs: 600 })
    const connection = await openConnection(running.url)
    connections.push(connection)
    const answer = await connection.request('GET /prices?symbol=BTC HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nabc')
    expect(answer.status).toBe(200) // a GET's body is not waited for
    await connection.closed // requestTimeoutMs ends the connection still waiting for 97 bytes
  })

  it('invalid limits are refused with PRICE_INVALID_OPTIONS before listening', async () => {
    const store = controlledStore().store
    for (const options of [
      { maxConcurrentQueries: 0 },
      { maxConcurrentQueries: 1.5 },
      { maxQueuedQueries: -1 },
      { queryTimeoutMs: -5 },
      { queryTimeoutMs: 2 ** 31 },
      { headersTimeoutMs: 0 },
      { headersTimeoutMs: 5_000, requestTimeoutMs: 1_000 },
      { requestTimeoutMs: Number.NaN },
    ]) {
      const err = await startServer({ store, ...options }).then(
        (running) => {
          servers.push(running)
          return undefined
        },
        (caught: unknown) => caught,
      )
      expect(isPriceStoreError(err, 'PRICE_INVALID_OPTIONS'), JSON.stringify(options)).toBe(true)
    }
    // 0 turns a timeout off.
    servers.push(await startServer({ store, queryTimeoutMs: 0, requestTimeoutMs: 0, headersTimeoutMs: 60_000 }))
  })
})

describe('price-store serve: the limits as flags', () => {
  it('--help documents them; bad values are refused with exit code 2', async () => {
    const help = await run(['serve', '--help'])
    expect(help.code).toBe(0)
    for (const flag of ['--max-concurrent-queries', '--max-queued-queries', '--query-timeout-ms', '--headers-timeout-ms', '--request-timeout-ms', 'HTTP_BUSY', 'HTTP_QUERY_TIMEOUT']) {
      expect(help.stdout).toContain(flag)
    }
    for (const [args, message] of [
      [['--max-concurrent-queries', '0'], /--max-concurrent-queries must be a whole number from 1/],
      [['--max-queued-queries', 'many'], /--max-queued-queries must be a whole number from 0/],
      [['--query-timeout-ms', '1.5'], /--query-timeout-ms must be a whole number/],
      [['--headers-timeout-ms', '5000', '--request-timeout-ms', '1000'], /--headers-timeout-ms \(5000\) must not be more than --request-timeout-ms \(1000\)/],
    ] as const) {
      const result = await run(['serve', '--port', '0', ...args])
      expect(result.code, args.join(' ')).toBe(2)
      expect(result.stderr).toMatch(message)
    }
  })

  it('--headers-timeout-ms reaches the server: a stalled head gets 408 well before the 10 s default', async () => {
    const memory = memoryIo()
    const { dir, cleanup } = await tempDir()
    try {
      const exit = runCli(['serve', '--port', '0', '--db', `${dir}/db`, '--headers-timeout-ms', '200', '--request-timeout-ms', '400'], memory.io)
      await memory.waitForStdout(/Press Ctrl\+C to stop\.\n/)
      const endpoint = /^ {2}(http:\/\/\S+)\/prices$/m.exec(memory.stdout())![1]!
      const stalled = await exchange(endpoint, 'GET /prices HTTP/1.1\r\nHost: x\r\n', { timeoutMs: 5_000 })
      expect(stalled.kind).toBe('answer')
      expectError(stalled as RawAnswer, 408, 'HTTP_REQUEST_TIMEOUT')
      memory.signal('SIGINT')
      expect(await exit).toBe(0)
    } finally {
      await cleanup()
    }
  })

  it('refusals are logged in plain words, at most once per 10 s per code, with a count of the rest', () => {
    const memory = memoryIo()
    let now = 1_000_000
    const log = requestErrorLogger(memory.io, () => now)
    const busy = Object.assign(new Error('the server is busy'), { name: 'QueryLimitError', code: 'HTTP_BUSY' })
    const timeout = Object.assign(new Error('the query did not finish'), { name: 'QueryLimitError', code: 'HTTP_QUERY_TIMEOUT' })
    log(busy)
    for (let i = 0; i < 5; i++) log(busy)
    log(timeout)
    now += 10_000
    log(busy)
    log(new Error('disk on fire'))
    const lines = memory.stderr().trimEnd().split('\n')
    expect(lines[0]).toBe('refused a request: the server is busy [HTTP_BUSY]')
    expect(lines[1]).toBe('refused a request: the query did not finish [HTTP_QUERY_TIMEOUT]')
    expect(lines[2]).toBe('refused a request: the server is busy [HTTP_BUSY] (and 5 more like it since the last report)')
    expect(lines[3]).toMatch(/^error while answering a request: Error: disk on fire$/)
  })

  it('a NATS outage refusing writes is logged the same way, not one stack trace per write', () => {
    const memory = memoryIo()
    const log = requestErrorLogger(memory.io, () => 5_000_000)
    for (let i = 0; i < 50; i++) log(new PriceStoreError('PRICE_LOG_UNAVAILABLE', 'the stream PRICES did not acknowledge the batch'))
    expect(memory.stderr()).toBe('refused a request: the stream PRICES did not acknowledge the batch [PRICE_LOG_UNAVAILABLE]\n')
  })
})

describe('a long answer does not hold the event loop', () => {
  const records = (count: number): PriceRecord[] =>
    Array.from({ length: count }, (_, i) =>
      Object.freeze({
        id: `id-${i}`, symbol: 'BTC', provider: 'p', value: i % 7 === 0 ? -0 : i + 0.25, signature: 's', permawebTx: 't', version: '0.4',
        source: { a: i }, timestamp: 1_700_000_000_000 + i, providerPublicKey: 'k', ...(i % 2 === 0 ? { minutes: i % 60 } : {}),
      }) as PriceRecord,
    )

  it.each([0, 1, 255, 256, 257, 1_000, 10_000])('%i records: serialised in slices, the very text answerToJson gives', async (count) => {
    const answer = records(count)
    expect(await answerToJsonInSlices(answer)).toBe(answerToJson(answer))
  })

  it('the several form is serialised as before', async () => {
    const answer = Object.fromEntries(records(600).map((record, i) => [`S${i}`, record]))
    expect(await answerToJsonInSlices(answer)).toBe(answerToJson(answer))
  })

  it('other work gets a turn while a 10,000-record answer is serialised', async () => {
    const store = { query: async () => records(10_000) }
    let turns = 0
    const tick = (): void => {
      turns++
      if (turns < 1_000) setImmediate(tick)
    }
    setImmediate(tick)
    const answer = await answerPrices(store, new URLSearchParams('symbol=BTC&fromTimestamp=0&toTimestamp=1&interval=1'))
    const turnsDuring = turns
    turns = 1_000 // stop ticking
    expect(answer.status).toBe(200)
    // One turn per slice at least (40 slices of 256); serialising it in one go would allow none.
    expect(turnsDuring).toBeGreaterThanOrEqual(39)
  })
})
