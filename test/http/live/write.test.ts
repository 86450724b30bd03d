/**
 * POST /prices (issue 11, ingest while serving): off without a write token,
 * bearer credentials checked before the body is read, a JSON array or NDJSON
 * written as one atomic batch with the store's validation, commit positions,
 * concurrent writers queued in the order their bodies complete, and GET
 * answering what was written (compared with the records sent).
 */
import { readFile } from 'node:fs/promises'
import { parse } from 'yaml'
import { describe, expect, it, vi } from 'vitest'
import { checkSchema, resolveRef } from '../../support/http/schema-check.js'
import { createPricesHandler } from '../../../src/adapters/http/handler.js'
import { startServer } from '../../../src/adapters/http/node.js'
import { PriceStore, isPriceStoreError } from '../../../src/index.js'
import type { BatchCommit, NewPriceRecord } from '../../../src/index.js'
import { MemoryLevel } from 'memory-level'
import { PROVIDER, demoRecords } from '../../support/http/demo-server.js'
import { TOKEN, answeredBySymbol, expectedBySymbol, ndjson, useWriteServers } from '../../support/http/write-server.js'
import { openConnection } from '../../reliability/http-raw.js'

const writeServer = useWriteServers()

const RECORDS = demoRecords().slice(0, 600)

describe('POST /prices without a write token', () => {
  it('answers 405, says writes are off, and GET still answers', async () => {
    const server = await writeServer({ writeToken: undefined })
    const res = await server.post(JSON.stringify(RECORDS.slice(0, 2)))
    expect(res.status).toBe(405)
    expect(res.json.error.code).toBe('HTTP_METHOD_NOT_ALLOWED')
    expect(res.json.error.message).toMatch(/write token/)
    expect(res.headers.get('allow')).toBe('GET, HEAD')
    expect(server.store.position).toBe(0)
    expect((await fetch(`${server.url}/prices?symbol=BTC`)).status).toBe(200)
  })

  it('refuses a bad token option, without quoting it', () => {
    const store = { query: async () => [] }
    for (const writeToken of ['', ' ', 'has space', 'tab\there', 'new\nline', 'çà', 'secret\u0000']) {
      let caught: unknown
      try {
        createPricesHandler(store, { writeToken })
      } catch (err) {
        caught = err
      }
      expect(isPriceStoreError(caught, 'PRICE_INVALID_OPTIONS')).toBe(true)
      if (writeToken.length > 3) expect((caught as Error).message).not.toContain(writeToken)
    }
  })

  it('serves no writes for a store that cannot write, even with a token', async () => {
    const running = await startServer({ store: { query: async () => [] }, writeToken: TOKEN })
    try {
      const res = await fetch(`${running.url}/prices`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` }, body: '[]' })
      expect(res.status).toBe(405)
    } finally {
      await running.close()
    }
  })
})

describe('POST /prices credentials', () => {
  const cases: [string, Record<string, string>, number][] = [
    ['no Authorization header', { authorization: '' }, 401],
    ['another scheme', { authorization: `Basic ${Buffer.from(`u:${TOKEN}`).toString('base64')}` }, 401],
    ['Bearer without a token', { authorization: 'Bearer' }, 401],
    ['Bearer with two words', { authorization: `Bearer ${TOKEN} x` }, 401],
    ['a wrong token', { authorization: 'Bearer not-the-token' }, 403],
    ['the token with one more character', { authorization: `Bearer ${TOKEN}x` }, 403],
    ['a prefix of the token', { authorization: `Bearer ${TOKEN.slice(0, -1)}` }, 403],
    ['the token in other case', { authorization: `Bearer ${TOKEN.toUpperCase()}` }, 403],
  ]
  for (const [name, headers, status] of cases) {
    it(`${name}: ${status}, nothing written, the token nowhere in the answer or the logs`, async () => {
      const server = await writeServer()
      const res = await server.post(JSON.stringify(RECORDS.slice(0, 3)), headers)
      expect(res.status).toBe(status)
      expect(res.json.error.code).toBe(status === 401 ? 'HTTP_UNAUTHORIZED' : 'HTTP_FORBIDDEN')
      if (status === 401) expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/)
      expect(server.store.position).toBe(0)
      expect(await server.store.latest('BTC')).toEqual([])
      const everything = [res.text, ...res.headers.values(), ...server.reported].join('\n')
      expect(everything).not.toContain(TOKEN)
      expect(everything).not.toContain(TOKEN.slice(3, 20))
    })
  }

  it('takes the scheme in any case', async () => {
    const server = await writeServer()
    const res = await server.post(JSON.stringify(RECORDS.slice(0, 1)), { authorization: `bearer ${TOKEN}` })
    expect(res.status).toBe(200)
  })
})

describe('POST /prices writes', () => {
  it('writes a JSON array as one batch and answers its count and commit position', async () => {
    const server = await writeServer()
    const res = await server.post(JSON.stringify(RECORDS))
    expect(res.status).toBe(200)
    expect(res.json).toEqual({ stored: RECORDS.length, position: 1 })
    expect(server.store.position).toBe(1)
    expect(await answeredBySymbol(server.url, RECORDS.map((r) => r.symbol))).toEqual(expectedBySymbol(RECORDS))
  })

  it('writes NDJSON (by content type, and sniffed without one), blank lines and CRLF included', async () => {
    const server = await writeServer()
    const [a, b] = [RECORDS.slice(0, 300), RECORDS.slice(300)]
    const first = await server.post(ndjson(a).replaceAll('\n', '\r\n\n'), { 'content-type': 'application/x-ndjson' })
    expect(first.json).toEqual({ stored: a.length, position: 1 })
    const sniffed = await fetch(`${server.url}/prices`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` }, body: Buffer.from(ndjson(b)) })
    expect(await sniffed.json()).toEqual({ stored: b.length, position: 2 })
    expect(await answeredBySymbol(server.url, RECORDS.map((r) => r.symbol))).toEqual(expectedBySymbol(RECORDS))
  })

  it('a bad record: 400 naming its index, NDJSON line, field and value, and nothing of the batch written', async () => {
    const server = await writeServer()
    const bad = RECORDS.slice(0, 10).map((record, i) => (i === 7 ? { ...record, value: 'abc' } : record))
    const asArray = await server.post(JSON.stringify(bad))
    expect(asArray.status).toBe(400)
    expect(asArray.json.error).toMatchObject({ code: 'PRICE_INVALID_RECORD', index: 7, field: 'value' })
    expect(asArray.json.error.message).toMatch(/record 7.*value.*"abc"/)
    const asLines = await server.post(`\n${ndjson(bad)}`, { 'content-type': 'application/x-ndjson' })
    expect(asLines.json.error).toMatchObject({ code: 'PRICE_INVALID_RECORD', index: 7, field: 'value', line: 9 })
    expect(asLines.json.error.message).toMatch(/record 7 \(line 9\)/)
    expect(server.store.position).toBe(0)
    expect(Object.values(await answeredBySymbol(server.url, bad.map((r) => r.symbol))).flat()).toEqual([])
  })

  it('refuses an empty batch with 400', async () => {
    const server = await writeServer()
    for (const [body, type] of [['[]', 'application/json'], ['\n\n', 'application/x-ndjson'], ['', 'application/x-ndjson']] as const) {
      const res = await server.post(body, { 'content-type': type })
      expect(res.status).toBe(400)
      expect(res.json.error.code).toBe('HTTP_INVALID_BODY')
    }
    expect(server.store.position).toBe(0)
  })

  it('concurrent writers each land exactly once, with distinct positions', async () => {
    const server = await writeServer()
    const batches = Array.from({ length: 20 }, (_, i) => RECORDS.slice(i * 30, i * 30 + 30))
    const answers = await Promise.all(batches.map((batch, i) => server.post(i % 2 === 0 ? JSON.stringify(batch) : ndjson(batch), { 'content-type': i % 2 === 0 ? 'application/json' : 'application/x-ndjson' })))
    expect(answers.map((a) => a.status)).toEqual(batches.map(() => 200))
    expect(answers.map((a) => a.json.stored)).toEqual(batches.map((b) => b.length))
    expect(new Set(answers.map((a) => a.json.position))).toEqual(new Set(batches.map((_, i) => i + 1)))
    expect(await answeredBySymbol(server.url, RECORDS.map((r) => r.symbol))).toEqual(expectedBySymbol(RECORDS))
  })

  it('commits in the order bodies complete, not the order requests started (FIFO)', async () => {
    const store = await PriceStore.open(new MemoryLevel(), { provider: PROVIDER })
    const called: number[] = []
    let release!: () => void
    const held = new Promise<void>((resolve) => (release = resolve))
    // Commits are held until all three are handed over, so they wait in line together.
    const spy = {
      query: store.query.bind(store),
      putMany: store.putMany.bind(store),
      putBatch: async (records: Iterable<NewPriceRecord>): Promise<BatchCommit> => {
        const batch = [...records]
        called.push(Number(batch[0]!.id.split('/')[1]))
        const commit = store.putBatch(batch)
        await held
        return commit
      },
    }
    const running = await startServer({ store: spy, writeToken: TOKEN })
    try {
      const batches = [0, 1, 2].map((n) => RECORDS.slice(n * 5, n * 5 + 5).map((record) => ({ ...record, id: `${record.id.slice(0, 20)}/${n}` })))
      const connections = await Promise.all(batches.map(() => openConnection(running.url)))
      const bodies = batches.map((batch) => JSON.stringify(batch))
      for (const [n, connection] of connections.entries()) {
        const body = bodies[n]!
        connection.write(`POST /prices HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${TOKEN}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body.slice(0, -1)}`)
      }
      const answers = []
      for (const n of [2, 0, 1]) {
        connections[n]!.write(bodies[n]!.slice(-1))
        await vi.waitFor(() => expect(called).toContain(n))
        answers[n] = connections[n]!.next()
      }
      release()
      const done = await Promise.all(answers)
      expect(called).toEqual([2, 0, 1])
      expect(done.map((answer) => JSON.parse(answer.body).position)).toEqual([2, 3, 1])
      for (const connection of connections) connection.destroy()
    } finally {
      await running.close()
      await store.close()
    }
  })

  it('takes no more than maxQueuedWrites writes at once: the next gets 503 HTTP_BUSY with retry-after, before its body is read', async () => {
    const server = await writeServer({ maxQueuedWrites: 2 })
    const body = JSON.stringify(RECORDS.slice(0, 4))
    const head = `POST /prices HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${TOKEN}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n`
    const slow = await Promise.all([openConnection(server.url), openConnection(server.url)])
    for (const connection of slow) connection.write(head + body.slice(0, 10))
    // The two slow writes hold both places once the server has their heads; retried until it has.
    await vi.waitFor(async () => {
      const res = await server.post(JSON.stringify(RECORDS.slice(10, 11)))
      expect(res.status).toBe(503)
      expect(res.json.error.code).toBe('HTTP_BUSY')
      expect(res.headers.get('retry-after')).toBe('1')
    })
    expect(server.store.position).toBe(0)
    const answers = slow.map((connection) => {
      connection.write(body.slice(10))
      return connection.next()
    })
    expect((await Promise.all(answers)).map((answer) => answer.status)).toEqual([200, 200])
    for (const connection of slow) connection.destroy()
    expect((await server.post(JSON.stringify(RECORDS.slice(10, 11)))).status).toBe(200)
  })
})

describe('POST /prices answers match docs/openapi.yaml', () => {
  it('200, 400 (both codes), 401, 403, 413 and 415 bodies and headers conform', async () => {
    const doc = parse(await readFile(new URL('../../../docs/openapi.yaml', import.meta.url), 'utf8')) as Record<string, any>
    const deref = (node: any): any => (typeof node?.$ref === 'string' ? deref(resolveRef(doc, node.$ref)) : node)
    const server = await writeServer({ maxWriteBytes: 100_000 })
    const bad = RECORDS.slice(0, 3).map((record, i) => (i === 1 ? { ...record, value: null } : record))
    const cases: [string | Buffer, Record<string, string>, number][] = [
      [JSON.stringify(RECORDS.slice(0, 3)), {}, 200],
      [ndjson(bad), { 'content-type': 'application/x-ndjson' }, 400],
      ['[1,', {}, 400],
      ['[]', { authorization: 'Basic x' }, 401],
      ['[]', { authorization: 'Bearer wrong' }, 403],
      [JSON.stringify(RECORDS), {}, 413],
      ['[]', { 'content-type': 'text/plain' }, 415],
    ]
    for (const [body, headers, status] of cases) {
      const res = await server.post(body, headers)
      expect(res.status).toBe(status)
      const documented = deref(doc.paths['/prices'].post.responses[String(status)])
      for (const name of Object.keys(documented.headers ?? {})) expect(res.headers.get(name), `header ${name}`).toBeTruthy()
      const media = documented.content[res.headers.get('content-type')!]
      expect(checkSchema(res.json, media.schema, doc)).toEqual([])
    }
  })
})
