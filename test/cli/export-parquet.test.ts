/**
 * `price-store export --format parquet`: a file DuckDB reads back to the
 * NDJSON export's records; `--fields` picks its columns; standard output
 * gets the same bytes as a file (a pipe), a terminal gets a usage error;
 * Ctrl+C leaves no file.
 */
import { readFile, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { Readable, Writable } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { runCli } from '../../src/cli/run-cli.js'
import type { CliIo } from '../../src/cli/io.js'
import type { PriceRecord } from '../../src/index.js'
import { demoDbForFile, run } from './helpers.js'
import { duckdb, parquetTypes, recordsOfParquet, rowsOf } from '../support/parquet.js'

let dir: string
let db: string
demoDbForFile((newDir, newDb) => {
  dir = newDir
  db = newDb
})

/** 20 demo tokens × 432 records. */
const DEMO_RECORDS = 8_640

const exists = (path: string): Promise<boolean> => stat(path).then(() => true, () => false)

/** Runs the CLI with a standard output that keeps bytes (the helpers' memory output keeps text). */
async function runBinary(argv: readonly string[], stdoutIsTTY = false): Promise<{ code: number; stdout: Buffer; stderr: string }> {
  const chunks: Buffer[] = []
  let stderr = ''
  const stdout = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      chunks.push(Buffer.from(chunk))
      callback()
    },
  }) as Writable & { isTTY?: boolean }
  if (stdoutIsTTY) stdout.isTTY = true
  const io: CliIo = {
    stdout,
    stderr: new Writable({
      write(chunk: Buffer | string, _encoding, callback) {
        stderr += chunk.toString()
        callback()
      },
    }),
    stdin: Readable.from([]),
    isTTY: false,
    onShutdown: () => () => {},
  }
  const code = await runCli(argv, io)
  return { code, stdout: Buffer.concat(chunks), stderr }
}

describe('price-store export --format parquet', () => {
  it('writes a Parquet file whose rows, read back by DuckDB, are the NDJSON export; the summary says PARQUET', async () => {
    const file = join(dir, 'all.parquet')
    const { code, stdout, stderr } = await run(['export', '--db', db, '--format', 'parquet', '-o', file])
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' })
    expect(stdout).toMatch(new RegExp(`^exported 8,640 records as PARQUET in .* to ${file}\\n$`))
    expect(await exists(`${file}.partial`)).toBe(false)
    const ndjson = (await run(['export', '--db', db])).stdout.split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as PriceRecord)
    const duck = await duckdb()
    try {
      const rebuilt = await recordsOfParquet(duck.connection, file)
      expect(rebuilt).toHaveLength(DEMO_RECORDS)
      expect(rebuilt).toEqual(ndjson)
      // The demo's records carry a liteEvmSignature (65 bytes) and no Arweave signature.
      const [row] = await rowsOf(duck.connection, `SELECT count(signature) AS arweave, min(octet_length(liteEvmSignature)) AS lite FROM '${file}'`)
      expect(row).toEqual({ arweave: 0n, lite: 65n })
    } finally {
      duck.close()
    }
  })

  it('--fields keeps the selected columns, as CSV does', async () => {
    const file = join(dir, 'fields.parquet')
    expect((await run(['export', '--db', db, '--format', 'parquet', '--fields', 'symbol,timestamp,value', '--symbol', 'BTC', '-o', file])).code).toBe(0)
    const duck = await duckdb()
    try {
      expect(await parquetTypes(duck.connection, file)).toEqual({ symbol: 'VARCHAR', value: 'DOUBLE', timestamp: 'TIMESTAMP WITH TIME ZONE' })
      const [row] = await rowsOf(duck.connection, `SELECT count(*) AS n, count(DISTINCT symbol) AS symbols FROM '${file}'`)
      expect(row).toEqual({ n: 432n, symbols: 1n })
    } finally {
      duck.close()
    }
    // A list that keeps no column (the key is in the metadata) is a usage error before anything is written.
    const none = await run(['export', '--db', db, '--format', 'parquet', '--fields', 'providerPublicKey', '-o', join(dir, 'none.parquet')])
    expect(none.code).toBe(2)
    expect(none.stderr).toContain('--fields=providerPublicKey keeps no column of a Parquet export')
    expect(await exists(join(dir, 'none.parquet.partial'))).toBe(false)
  })

  it('writes the same bytes to standard output (a pipe), the summary on stderr; refuses a terminal', async () => {
    const file = join(dir, 'btc.parquet')
    expect((await run(['export', '--db', db, '--format', 'parquet', '--symbol', 'BTC', '-o', file])).code).toBe(0)
    const piped = await runBinary(['export', '--db', db, '--format', 'parquet', '--symbol', 'BTC'])
    expect(piped.code).toBe(0)
    expect(piped.stderr).toMatch(/^exported 432 records as PARQUET in /)
    expect(Buffer.compare(piped.stdout, await readFile(file))).toBe(0)
    const terminal = await runBinary(['export', '--db', db, '--format', 'parquet', '--symbol', 'BTC'], true)
    expect(terminal.code).toBe(2)
    expect(terminal.stdout.length).toBe(0)
    expect(terminal.stderr).toContain('--format parquet writes a binary file: give --output FILE')
    // -o - is standard output too.
    expect((await runBinary(['export', '--db', db, '--format', 'parquet', '-o', '-'], true)).code).toBe(2)
  })
})
