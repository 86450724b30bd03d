/**
 * POST /prices under hostile input: bodies that are not JSON, truncated,
 * deeply nested, with huge numbers or wrong types, a bad record deep in a
 * batch, oversized bodies (declared and streamed), slow senders and clients
 * that leave mid-body. Each is refused with its coded answer, writes
 * nothing, and leaves the server answering. The only timers are the
 * server's own body timeout (set short) and the bounds that turn a hang
 * into a failure; nothing asserts on how long anything took.
 */
import { connect } from 'node:net'
import { describe, expect, it } from 'vitest'
import { demoRecords } from '../support/http/demo-server.js'
import { TOKEN, answeredBySymbol, expectedBySymbol, useWriteServers, type WriteServer } from '../support/http/write-server.js'
import { exchange, openConnection, type RawAnswer } from './http-raw.js'

const writeServer = useWriteServers()

const RECORDS = demoRecords().slice(0, 50)
const SYMBOLS = [...new Set(RECORDS.map((record) => record.symbol))]

/** The head of a POST /prices with the token. */
function postHead(headers: Record<string, string | number>): string {
  const lines = Object.entries({ host: 'x', authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', ...headers }).map(([name, value]) => `${name}: ${value}\r\n`)
  return `POST /prices HTTP/1.1\r\n${lines.join('')}\r\n`
}

/** Nothing was written, and the server still writes and answers a good batch (so it is fine after the abuse). */
async function expectNothingWrittenAndServing(server: WriteServer): Promise<void> {
  expect(server.store.position).toBe(0)
  expect(Object.values(await answeredBySymbol(server.url, SYMBOLS)).flat()).toEqual([])
  const few = RECORDS.slice(0, 5)
  const good = await server.post(JSON.stringify(few))
  expect(good.json).toEqual({ stored: few.length, position: 1 })
  expect(await answeredBySymbol(server.url, few.map((record) => record.symbol))).toEqual(expectedBySymbol(few))
  expect(server.reported.join('\n')).not.toContain(TOKEN)
}

function asAnswer(result: Awaited<ReturnType<typeof exchange>>): RawAnswer {
  if (result.kind !== 'answer') throw new Error(`no answer: ${result.kind} ${result.received}`)
  return result
}

describe('POST /prices, hostile bodies', () => {
  const good = JSON.stringify(RECORDS)
  const deep = `[${'['.repeat(100_000)}${']'.repeat(100_000)}]`
  const deepRecord = JSON.stringify([{ ...RECORDS[0], source: {} }]).replace('"source":{}', `"source":${'{"a":'.repeat(5_000)}1${'}'.repeat(5_000)}`)
  const bodies: [string, string, string, RegExp][] = [
    ['not JSON', 'hello', 'HTTP_INVALID_BODY', /not valid JSON/],
    ['truncated JSON', good.slice(0, good.length / 2), 'HTTP_INVALID_BODY', /not valid JSON: line 1 column \d+/],
    ['a JSON object, not an array', JSON.stringify(RECORDS[0]), 'HTTP_INVALID_BODY', /must be a JSON array/],
    ['a JSON string', '"[]"', 'HTTP_INVALID_BODY', /must be a JSON array/],
    ['deeply nested arrays', deep, 'PRICE_INVALID_RECORD', /record 0 must be an object/],
    ['a deeply nested source', deepRecord, 'PRICE_INVALID_RECORD', /source/],
    ['a huge number as value', good.replace(/"value":[^,]+/, '"value":1e999'), 'PRICE_INVALID_RECORD', /record 0: value must be a finite number/],
    ['a huge timestamp', good.replace(/"timestamp":\d+/, '"timestamp":123456789012345678901234567890'), 'PRICE_INVALID_RECORD', /timestamp/],
    ['a string timestamp', good.replace(/"timestamp":(\d+)/, '"timestamp":"$1"'), 'PRICE_INVALID_RECORD', /timestamp/],
    ['null records', '[null, null]', 'PRICE_INVALID_RECORD', /record 0 must be an object/],
    ['numbers as records', '[1,2,3]', 'PRICE_INVALID_RECORD', /record 0 must be an object/],
    ['a bad record at index 37', JSON.stringify(RECORDS.map((r, i) => (i === 37 ? { ...r, symbol: 'BTC USD' } : r))), 'PRICE_INVALID_RECORD', /record 37: symbol/],
    ['another provider at the last index', JSON.stringify(RECORDS.map((r, i) => (i === RECORDS.length - 1 ? { ...r, provider: 'other' } : r))), 'PRICE_INVALID_RECORD', /record 49: provider/],
  ]
  for (const [name, body, code, message] of bodies) {
    it(`${name}: 400 ${code}, nothing written`, async () => {
      const server = await writeServer()
      const res = await server.post(body)
      expect(res.status).toBe(400)
      expect(res.json.error.code).toBe(code)
      expect(res.json.error.message).toMatch(message)
      await expectNothingWrittenAndServing(server)
    })
  }

  it('NDJSON with a line that is not JSON: 400 naming the line', async () => {
    const server = await writeServer()
    const lines = RECORDS.map((record) => JSON.stringify(record))
    lines[12] = lines[12]!.slice(0, 30)
    const res = await server.post(lines.join('\n'), { 'content-type': 'application/x-ndjson' })
    expect(res.status).toBe(400)
    expect(res.json.error.message).toMatch(/^line 13 is not valid JSON: column \d+/)
    await expectNothingWrittenAndServing(server)
  })

  it('bytes that are not UTF-8: 400', async () => {
    const server = await writeServer()
    const res = await server.post(Buffer.from([0x5b, 0xff, 0xfe, 0x5d]))
    expect(res.json.error.code).toBe('HTTP_INVALID_BODY')
    await expectNothingWrittenAndServing(server)
  })

  it('another content type or a compressed body: 415, nothing written', async () => {
    const server = await writeServer()
    for (const headers of [{ 'content-type': 'text/plain' }, { 'content-type': 'application/x-www-form-urlencoded' }, { 'content-type': 'application/json; charset=latin1' }, { 'content-encoding': 'gzip' }]) {
      const res = await server.post(JSON.stringify(RECORDS), headers)
      expect(res.status).toBe(415)
      expect(res.json.error.code).toBe('HTTP_UNSUPPORTED_MEDIA_TYPE')
    }
    await expectNothingWrittenAndServing(server)
  })
})

describe('POST /prices, oversized, slow and vanishing senders', () => {
  it('a content-length over maxWriteBytes: 413 before the body is read', async () => {
    const server = await writeServer({ maxWriteBytes: 10_000 })
    // Only the head is sent: the answer cannot wait for a body.
    const answer = asAnswer(await exchange(server.url, postHead({ 'content-length': 10_001 })))
    expect(answer.status).toBe(413)
    expect(JSON.parse(answer.body).error.code).toBe('HTTP_PAYLOAD_TOO_LARGE')
    expect(answer.body).not.toContain(TOKEN)
    await expectNothingWrittenAndServing(server)
  })

  it('a chunked body that grows past maxWriteBytes: 413, reading stops, then the connection closes', async () => {
    const server = await writeServer({ maxWriteBytes: 10_000 })
    const connection = await openConnection(server.url)
    connection.write(postHead({ 'transfer-encoding': 'chunked' }))
    const chunk = `[${' '.repeat(4_000)}`
    connection.write(`${chunk.length.toString(16)}\r\n${chunk}\r\n`)
    const answer = connection.next()
    // Keeps sending: 4 KB chunks, far past the cap and past what is drained after the answer.
    const filler = ' '.repeat(4_000)
    let sending = true
    void answer.finally(() => (sending = false))
    for (let i = 0; i < 2_000 && sending; i++) {
      connection.write(`${filler.length.toString(16)}\r\n${filler}\r\n`)
      await new Promise((resolve) => setImmediate(resolve))
    }
    const refused = await answer
    expect(refused.status).toBe(413)
    expect(JSON.parse(refused.body).error.code).toBe('HTTP_PAYLOAD_TOO_LARGE')
    for (let i = 0; i < 400; i++) connection.write(`${filler.length.toString(16)}\r\n${filler}\r\n`)
    await connection.closed
    await expectNothingWrittenAndServing(server)
  })

  it('a body sent at 413 in full, within the drain allowance, keeps the connection for the next request', async () => {
    const server = await writeServer({ maxWriteBytes: 1_000 })
    const connection = await openConnection(server.url)
    const body = JSON.stringify(RECORDS)
    const refused = await connection.request(postHead({ 'content-length': Buffer.byteLength(body) }) + body)
    expect(refused.status).toBe(413)
    const next = await connection.request('GET /prices?symbol=BTC HTTP/1.1\r\nhost: x\r\n\r\n')
    expect(next.status).toBe(200)
    connection.destroy()
  })

  it('a slow sender: 408 once writeBodyTimeoutMs passes, nothing written', async () => {
    const server = await writeServer({ writeBodyTimeoutMs: 300 })
    const body = JSON.stringify(RECORDS)
    const answer = asAnswer(await exchange(server.url, postHead({ 'content-length': Buffer.byteLength(body) }) + body.slice(0, 100)))
    expect(answer.status).toBe(408)
    expect(JSON.parse(answer.body).error.code).toBe('HTTP_REQUEST_TIMEOUT')
    expect(answer.headers.connection).toBe('close')
    await expectNothingWrittenAndServing(server)
  })

  it('a client that leaves mid-body: nothing written, its place in line freed, the server fine', async () => {
    const server = await writeServer({ maxQueuedWrites: 1 })
    const body = JSON.stringify(RECORDS)
    for (let i = 0; i < 5; i++) {
      const { port } = new URL(server.url)
      const socket = connect(Number(port), '127.0.0.1')
      socket.on('error', () => {})
      await new Promise<void>((resolve) => socket.once('connect', () => resolve()))
      socket.write(postHead({ 'content-length': Buffer.byteLength(body) }) + body.slice(0, body.length - 5))
      // The server has it once the one place in line is taken: a second write is turned away.
      // (An empty batch probes without writing: 503 while the place is taken, 400 once it is free.)
      await expect.poll(async () => (await server.post('[]')).status).toBe(503)
      socket.destroy()
      // The place is freed when the server sees the client gone.
      await expect.poll(async () => (await server.post('[]')).status).toBe(400)
    }
    await expectNothingWrittenAndServing(server)
  })
})
