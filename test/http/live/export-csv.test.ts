/**
 * GET /prices/export?format=csv: the CSV of `price-store export --format csv`,
 * byte for byte, over the same store; its rows read back (by a CSV reader
 * written here) to the records written; `fields` picks its columns; a bad
 * `format` is a coded 400 before any byte.
 */
import { get, request as request_ } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RunningServer } from '../../../src/adapters/http/node.js'
import { PriceStore, type NewPriceRecord } from '../../../src/index.js'
import { run } from '../../cli/helpers.js'
import { generateDemoRecords } from '../../../src/demo/demo-data.js'
import { END, PROVIDER, TOKENS, serve, servedDiskStore } from '../../support/http/demo-server.js'
import { parseCsv } from '../../support/csv.js'

const COLUMNS = ['id', 'symbol', 'provider', 'value', 'signature', 'permawebTx', 'version', 'source', 'timestamp', 'extra']

/** Two hand-made records: an Arweave `signature`, a comma and a quote in `source`, and extra fields. */
const HAND_MADE: NewPriceRecord[] = [
  {
    id: 'hand-1', symbol: 'ZZZ', provider: PROVIDER.id, value: 1.5, signature: 'c2lnbmF0dXJl', permawebTx: 'tx,1', version: '0.4',
    source: { 'a"b': 1, c: 2 }, timestamp: Date.UTC(2024, 4, 31, 12), ...({ note: 'x, "y"' } as object),
  } as NewPriceRecord,
  { id: 'hand-2', symbol: 'ZZZ', provider: PROVIDER.id, value: -0, signature: 'c2ln', permawebTx: 'tx-2', version: '0.4', source: {}, timestamp: Date.UTC(2024, 4, 31, 13) },
]

let cleanup: () => Promise<void>
let store: PriceStore
let server: RunningServer
let records: NewPriceRecord[]
let db: string

beforeAll(async () => {
  // The demo's records carry a `liteEvmSignature` and no `signature`: an empty signature cell.
  records = [...generateDemoRecords({ providerId: PROVIDER.id, end: END, durationMs: 2 * 3_600_000, tokens: TOKENS }), ...HAND_MADE]
  ;({ db, store, server, cleanup } = await servedDiskStore(records))
}, 60_000)

afterAll(async () => {
  await server?.close()
  await store?.close()
  await cleanup()
})

/** GETs an export on a connection of its own (no keep-alive socket the server may be closing meanwhile). */
async function csvOf(query: string): Promise<{ response: { status: number; headers: Headers }; body: string }> {
  return new Promise((resolve, reject) => {
    const request = get(`${server.url}/prices/export?${query}`, { agent: false }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (chunk: Buffer) => chunks.push(chunk))
      res.on('error', reject)
      res.on('end', () => {
        const headers = new Headers()
        for (const [name, value] of Object.entries(res.headers)) if (typeof value === 'string') headers.set(name, value)
        resolve({ response: { status: res.statusCode as number, headers }, body: Buffer.concat(chunks).toString('utf8') })
      })
    })
    request.on('error', reject)
  })
}

/** HEADs an export on a connection of its own. */
async function headOf(query: string): Promise<{ status: number; headers: Headers; text(): Promise<string> }> {
  return new Promise((resolve, reject) => {
    const request = request_(`${server.url}/prices/export?${query}`, { method: 'HEAD', agent: false }, (res) => {
      let body = ''
      res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk))
      res.on('end', () => {
        const headers = new Headers()
        for (const [name, value] of Object.entries(res.headers)) if (typeof value === 'string') headers.set(name, value)
        resolve({ status: res.statusCode as number, headers, text: async () => body })
      })
    })
    request.on('error', reject)
    request.end()
  })
}

describe('GET /prices/export?format=csv', () => {
  it('streams a header and one row per record, text/csv, chunked, each row the record written', async () => {
    const { response, body } = await csvOf('format=csv')
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toBe('text/csv; charset=utf-8')
    expect(response.headers.get('cache-control')).toBe('no-store')
    expect(response.headers.get('content-length')).toBeNull()
    expect(body.length).toBeGreaterThan(64 * 1024) // more than one piece
    const [header, ...rows] = parseCsv(body)
    expect(header).toEqual(COLUMNS)
    expect(rows).toHaveLength(records.length)
    const byId = new Map(rows.map((row) => [row[0], row]))
    for (const record of records) {
      const row = byId.get(record.id)!
      const extra = Object.fromEntries(Object.entries(record).filter(([name]) => !COLUMNS.includes(name)))
      expect(row).toEqual([
        record.id, record.symbol, record.provider, Object.is(record.value, -0) ? '-0' : String(record.value), record.signature ?? '',
        record.permawebTx, record.version, JSON.stringify(record.source), String(record.timestamp), Object.keys(extra).length === 0 ? '' : JSON.stringify(extra),
      ])
    }
  })

  it('is what price-store export --format csv writes, byte for byte, with and without a selection', async () => {
    const queries: [string, string[]][] = [
      ['format=csv', []],
      ['format=csv&symbol=ZZZ,BTC&from=2024-05-31T12:00:00Z&to=2024-05-31T23:30:00Z', ['--symbol', 'ZZZ,BTC', '--from', '2024-05-31T12:00:00Z', '--to', '2024-05-31T23:30:00Z']],
      ['format=csv&fields=id,value,timestamp', ['--fields', 'id,value,timestamp']],
      ['format=csv&fields=-signature,-source', ['--fields=-signature,-source']],
    ]
    const bodies: string[] = []
    for (const [query] of queries) bodies.push((await csvOf(query)).body)
    await server.close()
    await store.close()
    for (const [i, [query, flags]] of queries.entries()) {
      const cli = await run(['export', '--db', db, '--provider-id', PROVIDER.id, '--format', 'csv', ...flags])
      expect(cli.code, `${query}: ${cli.stderr}`).toBe(0)
      expect(bodies[i], query).toBe(cli.stdout)
    }
    store = await PriceStore.open(db, { provider: PROVIDER })
    server = await serve(store)
  }, 60_000)

  it('honours fields: a keep list keeps those columns, a drop list drops them and keeps extra', async () => {
    const kept = parseCsv((await csvOf('format=csv&symbol=ZZZ&fields=timestamp,id')).body)
    expect(kept).toEqual([['id', 'timestamp'], ['hand-1', String(HAND_MADE[0]!.timestamp)], ['hand-2', String(HAND_MADE[1]!.timestamp)]])
    const dropped = parseCsv((await csvOf('format=csv&symbol=ZZZ&fields=-signature,-source,-provider')).body)
    expect(dropped[0]).toEqual(['id', 'symbol', 'value', 'permawebTx', 'version', 'timestamp', 'extra'])
    expect(dropped[1]).toEqual(['hand-1', 'ZZZ', '1.5', 'tx,1', '0.4', String(HAND_MADE[0]!.timestamp), '{"note":"x, \\"y\\""}'])
  })

  it('honours fields naming an EVM signature: a keep list keeps it in extra, a drop list takes it out of extra', async () => {
    const demo = records.filter((record) => 'liteEvmSignature' in record)
    const symbol = demo[0]!.symbol
    const mine = demo.filter((record) => record.symbol === symbol)
    const kept = parseCsv((await csvOf(`format=csv&symbol=${symbol}&fields=id,liteEvmSignature`)).body)
    expect(kept[0]).toEqual(['id', 'extra'])
    expect(kept.slice(1).map(([id, extra]) => [id, JSON.parse(extra as string)]).sort()).toEqual(
      mine.map((record) => [record.id, { liteEvmSignature: (record as { liteEvmSignature: string }).liteEvmSignature }]).sort())
    const dropped = parseCsv((await csvOf(`format=csv&symbol=${symbol}&fields=-liteEvmSignature`)).body)
    expect(dropped[0]).toEqual(COLUMNS)
    for (const row of dropped.slice(1)) expect(row.at(-1)).not.toContain('liteEvmSignature')
  })

  it('format=ndjson is the default NDJSON; an empty selection is the header alone', async () => {
    const ndjson = await csvOf('format=ndjson&symbol=ZZZ')
    expect(ndjson.response.headers.get('content-type')).toBe('application/x-ndjson')
    expect(ndjson.body).toBe((await csvOf('symbol=ZZZ')).body)
    expect((await csvOf('format=csv&symbol=NONE')).body).toBe(`${COLUMNS.join(',')}\r\n`)
    const head = await headOf('format=csv')
    expect(head.status).toBe(200)
    expect(head.headers.get('content-type')).toBe('text/csv; charset=utf-8')
    expect(await head.text()).toBe('')
  })

  it('refuses another or a repeated format with a coded 400 before any byte, GET and HEAD alike', async () => {
    for (const query of ['format=xml', 'format=CSV', 'format=', 'format=csv&format=csv']) {
      const { response, body } = await csvOf(query)
      expect(response.status, query).toBe(400)
      expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8')
      const { error } = JSON.parse(body) as { error: { code: string; parameter: string; message: string } }
      expect(error.code, query).toBe('PRICE_INVALID_QUERY')
      expect(error.message, query).toContain('format')
      expect((await headOf(query)).status, query).toBe(400)
    }
    const { body } = await csvOf('format=xml')
    expect((JSON.parse(body) as { error: { message: string } }).error.message).toBe('format must be ndjson, csv or parquet (got "xml")')
  })
})
