/**
 * docs/cli.md's DuckDB recipe (the SQL block after its `parquet-recipe`
 * marker), run as written against a Parquet export the CLI writes here and a
 * `trades` table made here: each trade gets the last price at or before its
 * time, computed independently from the NDJSON export.
 */
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { DEFAULT_PROVIDER } from '../../src/cli/config.js'
import { PriceStore, type PriceRecord } from '../../src/index.js'
import { record, run, tempDir } from '../cli/helpers.js'
import { duckdb, quote, rowsOf } from '../support/parquet.js'

const doc = await readFile(new URL('../../docs/cli.md', import.meta.url), 'utf8')
const marker = '<!-- parquet-recipe:'

/** The recipe's SQL, as the doc shows it. */
function recipe(): string {
  const start = doc.indexOf(marker)
  expect(start).toBeGreaterThan(-1)
  const block = /```sql\n([\s\S]*?)```/.exec(doc.slice(start))?.[1]
  expect(block).toBeDefined()
  return block as string
}

const T0 = Date.UTC(2026, 0, 1)
let dir: string
let cleanup: () => Promise<void>

beforeAll(async () => {
  ;({ dir, cleanup } = await tempDir())
  const db = join(dir, 'db')
  const store = await PriceStore.open(db, { provider: DEFAULT_PROVIDER })
  // BTC and ETH every 10 s for 10 minutes, SOL (left out of the export) too.
  const records = []
  for (let i = 0; i < 60; i++) {
    for (const [symbol, base] of [['BTC', 90_000], ['ETH', 3_000], ['SOL', 150]] as const) {
      records.push({ ...record(symbol, T0 + i * 10_000), value: base + i })
    }
  }
  await store.putMany(records as never)
  await store.close()
  const exported = await run(['export', '--db', db, '--symbol', 'BTC,ETH', '--format', 'parquet', '-o', join(dir, 'prices.parquet')])
  expect(exported.code, exported.stderr).toBe(0)
})

afterAll(async () => {
  await cleanup?.()
})

test("docs/cli.md's ASOF JOIN recipe runs as written and prices each trade as of its time", async () => {
  const ndjson = (await run(['export', '--db', join(dir, 'db'), '--symbol', 'BTC,ETH'])).stdout.split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as PriceRecord)
  // Between ticks, on a tick, before the first price (no price: nulls), after the last, and a symbol not exported.
  const trades: [number, string, number, number][] = [
    [1, 'BTC', T0 + 15_000, 2],
    [2, 'ETH', T0 + 100_000, -1.5],
    [3, 'BTC', T0 - 1, 1],
    [4, 'ETH', T0 + 3_600_000, 10],
    [5, 'SOL', T0 + 15_000, 3],
    [6, 'BTC', T0 + 599_999, 0.5],
  ]
  const duck = await duckdb()
  try {
    const { connection } = duck
    await connection.run('CREATE TABLE trades (trade_id INTEGER, symbol VARCHAR, ts TIMESTAMPTZ, qty DOUBLE)')
    for (const [id, symbol, ms, qty] of trades) await connection.run(`INSERT INTO trades VALUES (${id}, ${quote(symbol)}, make_timestamp(${ms * 1000})::TIMESTAMPTZ, ${qty})`)
    // The recipe names prices.parquet as a user's shell would, relative: DuckDB finds it in the export's folder.
    await connection.run(`SET file_search_path = ${quote(dir)}`)
    const rows = await rowsOf(connection, recipe())
    const expected = trades.map(([id, symbol, ms, qty]) => {
      const price = ndjson.filter((r) => r.symbol === symbol && r.timestamp <= ms).at(-1)
      return { trade_id: id, symbol, ts: ms, qty, price_time: price?.timestamp ?? null, price: price?.value ?? null, notional: price === undefined ? null : qty * price.value }
    })
    const millis = (value: unknown): number | null => (value === null ? null : (value as Date).getTime())
    expect(rows.map((row) => ({ ...row, ts: millis(row.ts), price_time: millis(row.price_time) }))).toEqual(expected)
    // Not vacuous: four trades priced, two not.
    expect(expected.filter((row) => row.price !== null)).toHaveLength(4)
    expect(expected[0]?.price).toBe(90_001)
  } finally {
    duck.close()
  }
})
