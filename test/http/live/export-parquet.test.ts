/**
 * GET /prices/export?format=parquet: a Parquet file that DuckDB reads back to
 * the rows of the NDJSON export, typed columns; the bytes of
 * `price-store export --format parquet`, with and without a selection;
 * `fields` picks its columns; never compressed again by an HTTP coding; row
 * groups handed out as they complete (bounded memory); a client that reads
 * nothing is cut after exportStallMs.
 */
import { randomBytes } from 'node:crypto'
import { get } from 'node:http'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type RunningServer } from '../../../src/adapters/http/node.js'
import { ParquetExport, parquetColumns } from '../../../src/adapters/http/core/parquet-export.js'
import { parseFieldSelection } from '../../../src/rules/fields.js'
import { PriceStore, type NewPriceRecord, type PriceRecord } from '../../../src/index.js'
import { generateDemoRecords } from '../../../src/demo/demo-data.js'
import { run } from '../../cli/helpers.js'
import { END, PROVIDER, TOKENS, serve, servedDiskStore } from '../../support/http/demo-server.js'
import { openGet, until } from '../../support/http/operations-helpers.js'
import { duckdb, parquetTypes, recordsOfParquet, rowGroupsOf } from '../../support/parquet.js'

const EVM = `0x${'ab'.repeat(65)}`

/** Hand-made records: what the typed columns cannot hold exactly goes to `extra`, -0 everywhere, extra fields. */
const HAND_MADE: NewPriceRecord[] = [
  {
    id: 'hand-1', symbol: 'ZZZ', provider: PROVIDER.id, value: 1.5, signature: 'c2lnbmF0dXJl', permawebTx: 'tx,1', version: '0.4',
    source: { 'a"b': 1, c: -0, d: [1, 'x'] }, timestamp: Date.UTC(2024, 4, 31, 12), ...({ note: 'x, "y"', nested: { n: -0 } } as object),
  } as NewPriceRecord,
  // Not base64 (kept as its text in extra); a canonical EVM signature (binary) and an upper-case one (extra).
  {
    id: 'hand-2', symbol: 'ZZZ', provider: PROVIDER.id, value: -0, signature: 'not base64!', permawebTx: 'tx-2', version: '0.4', source: {},
    timestamp: Date.UTC(2024, 4, 31, 13), ...({ liteEvmSignature: EVM, evmSignature: EVM.toUpperCase().replace('0X', '0x') } as object),
  } as NewPriceRecord,
  // No signature but an EVM one.
  {
    id: 'hand-3', symbol: 'ZZZ', provider: PROVIDER.id, value: 3, permawebTx: 'tx-3', version: '0.5', source: { e: 'error' },
    timestamp: Date.UTC(2024, 4, 31, 14), ...({ liteEvmSignature: EVM } as object),
  } as NewPriceRecord,
]

let dir: string
let cleanup: () => Promise<void>
let store: PriceStore
let server: RunningServer
let records: NewPriceRecord[]
let db: string

beforeAll(async () => {
  // The demo's records carry a `liteEvmSignature`; the unsigned ones an Arweave-looking `signature`.
  records = [
    ...generateDemoRecords({ providerId: PROVIDER.id, end: END, durationMs: 2 * 3_600_000, tokens: TOKENS }),
    ...generateDemoRecords({ providerId: PROVIDER.id, end: END - 2 * 3_600_000, durationMs: 3_600_000, tokens: TOKENS, signed: false }),
    ...HAND_MADE,
  ]
  ;({ dir, db, store, server, cleanup } = await servedDiskStore(records))
}, 60_000)

afterAll(async () => {
  await server?.close()
  await store?.close()
  await cleanup()
})

/** GETs an export's bytes on a connection of its own. */
async function exportOf(query: string, headers: Record<string, string> = {}, url = server.url): Promise<{ status: number; headers: Record<string, unknown>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const request = get(`${url}/prices/export?${query}`, { agent: false, headers }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (chunk: Buffer) => chunks.push(chunk))
      res.on('error', reject)
      res.on('end', () => resolve({ status: res.statusCode as number, headers: res.headers, body: Buffer.concat(chunks) }))
    })
    request.on('error', reject)
  })
}

let files = 0
/** Writes bytes to a file of their own in the test's folder. */
async function saved(bytes: Uint8Array): Promise<string> {
  const path = join(dir, `export-${++files}.parquet`)
  await writeFile(path, bytes)
  return path
}

describe('GET /prices/export?format=parquet', () => {
  it('streams a Parquet file whose rows, read back by DuckDB, are the NDJSON export', async () => {
    const { status, headers, body } = await exportOf('format=parquet', { 'accept-encoding': 'gzip, br' })
    expect(status).toBe(200)
    expect(headers['content-type']).toBe('application/vnd.apache.parquet')
    expect(headers['cache-control']).toBe('no-store')
    expect(headers['content-length']).toBeUndefined()
    // Parquet's pages are Snappy-compressed already: no HTTP coding on top.
    expect(headers['content-encoding']).toBeUndefined()
    expect(body.subarray(0, 4).toString()).toBe('PAR1')
    expect(body.subarray(-4).toString()).toBe('PAR1')
    const ndjson = (await exportOf('')).body.toString('utf8').split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as PriceRecord)
    expect(ndjson).toHaveLength(records.length)
    const duck = await duckdb()
    try {
      const rebuilt = await recordsOfParquet(duck.connection, await saved(body))
      expect(rebuilt).toEqual(ndjson)
      // toEqual takes -0 for 0: the sign is checked on its own.
      const hand2 = rebuilt.find((record) => record.id === 'hand-2')!
      expect(Object.is(hand2.value, -0)).toBe(true)
      expect(Object.is((rebuilt.find((record) => record.id === 'hand-1')!.source as { c: number }).c, -0)).toBe(true)
    } finally {
      duck.close()
    }
  })

  it('types its columns: DOUBLE value, TIMESTAMP WITH TIME ZONE (ms) timestamp, BLOB signatures, JSON source and extra', async () => {
    const duck = await duckdb()
    try {
      const path = await saved((await exportOf('format=parquet&symbol=ZZZ')).body)
      expect(await parquetTypes(duck.connection, path)).toEqual({
        id: 'VARCHAR', symbol: 'VARCHAR', provider: 'VARCHAR', value: 'DOUBLE', signature: 'BLOB', liteEvmSignature: 'BLOB', evmSignature: 'BLOB',
        permawebTx: 'VARCHAR', version: 'VARCHAR', source: 'JSON', timestamp: 'TIMESTAMP WITH TIME ZONE', extra: 'JSON',
      })
      const rows = (await duck.connection.runAndReadAll(`
        SELECT id, octet_length(signature) AS sig, octet_length(liteEvmSignature) AS lite, octet_length(evmSignature) AS evm,
          permawebTx IS NULL AS txNull, extra::VARCHAR AS extra, epoch_ms(timestamp) AS ms
        FROM '${path}' ORDER BY id`)).getRowObjectsJS()
      expect(rows).toEqual([
        { id: 'hand-1', sig: 9n, lite: null, evm: null, txNull: false, extra: '{"note":"x, \\"y\\"","nested":{"n":-0}}', ms: BigInt(Date.UTC(2024, 4, 31, 12)) },
        { id: 'hand-2', sig: null, lite: 65n, evm: null, txNull: false, extra: `{"signature":"not base64!","evmSignature":"${EVM.toUpperCase().replace('0X', '0x')}"}`, ms: BigInt(Date.UTC(2024, 4, 31, 13)) },
        { id: 'hand-3', sig: null, lite: 65n, evm: null, txNull: false, extra: null, ms: BigInt(Date.UTC(2024, 4, 31, 14)) },
      ])
    } finally {
      duck.close()
    }
  })

  it('is what price-store export --format parquet writes, byte for byte, with and without a selection', async () => {
    const queries: [string, string[]][] = [
      ['format=parquet', []],
      ['format=parquet&symbol=ZZZ,BTC&from=2024-05-31T12:00:00Z&to=2024-05-31T23:30:00Z', ['--symbol', 'ZZZ,BTC', '--from', '2024-05-31T12:00:00Z', '--to', '2024-05-31T23:30:00Z']],
      ['format=parquet&fields=symbol,value,timestamp', ['--fields', 'symbol,value,timestamp']],
      ['format=parquet&fields=-signature,-source', ['--fields=-signature,-source']],
    ]
    const bodies: Buffer[] = []
    for (const [query] of queries) bodies.push((await exportOf(query)).body)
    await server.close()
    await store.close()
    try {
      for (const [i, [query, flags]] of queries.entries()) {
        const file = join(dir, `cli-${i}.parquet`)
        const cli = await run(['export', '--db', db, '--provider-id', PROVIDER.id, '--format', 'parquet', '-o', file, ...flags])
        expect(cli.code, `${query}: ${cli.stderr}`).toBe(0)
        expect(cli.stdout, query).toMatch(/^exported [\d,]+ records? as PARQUET in /)
        expect(Buffer.compare(bodies[i]!, await readFile(file)), query).toBe(0)
      }
    } finally {
      store = await PriceStore.open(db, { provider: PROVIDER })
      server = await serve(store)
    }
  }, 60_000)

  it('honours fields as CSV does: a keep list keeps those columns (extra only for what they may overflow), a drop list drops them', async () => {
    const duck = await duckdb()
    try {
      const kept = await saved((await exportOf('format=parquet&symbol=ZZZ&fields=timestamp,value,id')).body)
      expect(Object.keys(await parquetTypes(duck.connection, kept))).toEqual(['id', 'value', 'timestamp'])
      const rows = (await duck.connection.runAndReadAll(`SELECT id, value FROM '${kept}'`)).getRowObjectsJS()
      expect(rows).toEqual([{ id: 'hand-1', value: 1.5 }, { id: 'hand-2', value: -0 }, { id: 'hand-3', value: 3 }])
      const signature = await saved((await exportOf('format=parquet&symbol=ZZZ&fields=id,signature')).body)
      expect(Object.keys(await parquetTypes(duck.connection, signature))).toEqual(['id', 'signature', 'extra'])
      const overflow = (await duck.connection.runAndReadAll(`SELECT extra::VARCHAR AS extra FROM '${signature}'`)).getRowObjectsJS()
      expect(overflow).toEqual([{ extra: null }, { extra: '{"signature":"not base64!"}' }, { extra: null }])
      const dropped = await saved((await exportOf('format=parquet&symbol=ZZZ&fields=-signature,-source,-provider,-providerPublicKey')).body)
      expect(Object.keys(await parquetTypes(duck.connection, dropped))).toEqual(['id', 'symbol', 'value', 'liteEvmSignature', 'evmSignature', 'permawebTx', 'version', 'timestamp', 'extra'])
      expect((await duck.connection.runAndReadAll(`SELECT * FROM parquet_kv_metadata('${dropped}')`)).getRowObjectsJS()).toEqual([])
      // A keep list naming providerPublicKey keeps it, in the metadata.
      const keyed = await saved((await exportOf('format=parquet&symbol=ZZZ&fields=symbol,providerPublicKey')).body)
      expect(Object.keys(await parquetTypes(duck.connection, keyed))).toEqual(['symbol'])
      const kv = (await duck.connection.runAndReadAll(`SELECT decode(key) AS key, decode(value) AS value FROM parquet_kv_metadata('${keyed}')`)).getRowObjectsJS()
      expect(kv).toEqual([{ key: 'providerPublicKey', value: PROVIDER.publicKey }])
    } finally {
      duck.close()
    }
  })

  it('an empty selection is a valid file of no rows; HEAD sends the headers alone', async () => {
    const duck = await duckdb()
    try {
      const empty = await saved((await exportOf('format=parquet&symbol=NONE')).body)
      expect((await duck.connection.runAndReadAll(`SELECT count(*) AS n FROM '${empty}'`)).getRowObjectsJS()).toEqual([{ n: 0n }])
      expect(Object.keys(await parquetTypes(duck.connection, empty))).toHaveLength(12)
    } finally {
      duck.close()
    }
    const head = await fetch(`${server.url}/prices/export?format=parquet`, { method: 'HEAD', headers: { 'accept-encoding': 'gzip' } })
    expect(head.status).toBe(200)
    expect(head.headers.get('content-type')).toBe('application/vnd.apache.parquet')
    expect(head.headers.get('content-encoding')).toBeNull()
    expect(await head.text()).toBe('')
  })

  it('lets fields name the EVM signature columns: kept (with extra, which their odd values overflow into) or dropped', () => {
    expect(parquetColumns(parseFieldSelection('fields', 'id,liteEvmSignature'))).toEqual(['id', 'liteEvmSignature', 'extra'])
    expect(parquetColumns(parseFieldSelection('fields', '-liteEvmSignature,-evmSignature'))).toEqual(
      ['id', 'symbol', 'provider', 'value', 'signature', 'permawebTx', 'version', 'source', 'timestamp', 'extra'])
  })

  it('refuses parquet in another case or repeated, or fields that keep no column, with a coded 400', async () => {
    for (const query of ['format=PARQUET', 'format=parquet&format=parquet', 'format=parquet&fields=providerPublicKey', 'format=parquet&fields=minutes']) {
      const { status, body } = await exportOf(query)
      expect(status, query).toBe(400)
      expect((JSON.parse(body.toString()) as { error: { code: string } }).error.code).toBe('PRICE_INVALID_QUERY')
    }
  })
})

describe('Parquet row groups', () => {
  it('hands out each row group as it completes (by rows or by bytes), the file whole once finished', async () => {
    const demo = [...generateDemoRecords({ providerId: PROVIDER.id, end: END, durationMs: 3_600_000, tokens: TOKENS })]
      .map((record): PriceRecord => ({ ...record, providerPublicKey: PROVIDER.publicKey }))
    for (const [options, groups] of [[{ rowGroupRows: 500 }, true], [{ rowGroupBytes: 100_000 }, false]] as const) {
      const writer = new ParquetExport(undefined, options)
      const pieces: Uint8Array[] = []
      const handedAt: number[] = []
      for (const [i, record] of demo.entries()) {
        const piece = writer.add(record)
        if (piece !== undefined) (pieces.push(piece), handedAt.push(i + 1))
      }
      pieces.push(writer.finish())
      if (groups) expect(handedAt).toEqual(Array.from({ length: Math.floor((demo.length - 1) / 500) }, (_, i) => (i + 1) * 500))
      else expect(handedAt.length).toBeGreaterThan(3) // about 100 kB of cells each: far fewer rows than the default
      const duck = await duckdb()
      try {
        const path = await saved(Buffer.concat(pieces))
        const sizes = await rowGroupsOf(duck.connection, path)
        expect(sizes.reduce((a, b) => a + b, 0)).toBe(demo.length)
        expect(sizes.slice(0, -1)).toEqual(handedAt.map((at, i) => at - (handedAt[i - 1] ?? 0)))
        expect(await recordsOfParquet(duck.connection, path)).toEqual(demo)
      } finally {
        duck.close()
      }
    }
  })
})

describe('a Parquet export to a client that reads nothing', () => {
  it('is cut after exportStallMs, and its reading ended', async () => {
    // A store that exports as many records as asked (Arweave-sized random signatures: about 1 kB of Parquet each),
    // so the body outgrows what the loopback socket's buffers take (tens of MB) without loading a store that large.
    let read = 0
    let ended = false
    const endless = {
      async query(): Promise<never> {
        throw new Error('not asked')
      },
      export(): AsyncIterable<PriceRecord> {
        return (async function* () {
          try {
            for (; read < 1_000_000; read++) {
              yield { ...HAND_MADE[0]!, id: `r${read}`, signature: randomBytes(512).toString('base64'), timestamp: read, providerPublicKey: PROVIDER.publicKey } as PriceRecord
            }
          } finally {
            ended = true
          }
        })()
      },
    }
    const running = await startServer({ store: endless, exportStallMs: 100 })
    try {
      const stalled = await openGet(`${running.url}/prices/export?format=parquet`)
      expect(stalled.statusCode).toBe(200)
      stalled.pause()
      await until(() => ended, 'the cut export ended its reading')
      expect(read).toBeLessThan(1_000_000)
      // What the socket held is all there is: the body stops short, its end never came.
      const complete = await new Promise<boolean>((resolve) => {
        stalled.once('close', () => resolve(stalled.complete))
        stalled.resume()
      })
      expect(complete).toBe(false)
    } finally {
      await running.close()
    }
  }, 60_000)
})

describe('text a STRING or JSON column cannot hold', () => {
  it('a permawebTx that is not well-formed Unicode leaves its column null and goes into extra as its JSON escape', async () => {
    const writer = new ParquetExport(undefined)
    const record = { ...HAND_MADE[2]!, permawebTx: 'tx-\ud800', providerPublicKey: PROVIDER.publicKey } as PriceRecord
    const bytes = Buffer.concat([writer.add(record) ?? new Uint8Array(), writer.finish()])
    expect(bytes.includes(Buffer.from('{"permawebTx":"tx-\\ud800"}'))).toBe(true)
    // DuckDB refuses a lone surrogate's escape in JSON (docs/cli.md says so); hyparquet, the writer's reader, reads it back.
    const { parquetReadObjects } = await import('hyparquet')
    const [row] = await parquetReadObjects({ file: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length) as ArrayBuffer })
    expect(row?.permawebTx).toBeNull()
    expect(row?.extra).toEqual({ permawebTx: 'tx-\ud800' })
  })
})
