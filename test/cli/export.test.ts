import { readFile, readdir, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { DEFAULT_PROVIDER } from '../../src/cli/config.js'
import { runCli } from '../../src/cli/run-cli.js'
import { PriceStore } from '../../src/index.js'
import { toExactJson } from '../../src/http.js'
import type { PriceRecord } from '../../src/index.js'
import { demoDbForFile, memoryIo, record, run, tempDir, writeLines } from './helpers.js'
import { parseCsv } from '../support/csv.js'

let dir: string
let db: string
demoDbForFile((newDir, newDb) => {
  dir = newDir
  db = newDb
})

/** 20 demo tokens × 432 records. */
const DEMO_RECORDS = 8_640

const exists = (path: string): Promise<boolean> => stat(path).then(() => true, () => false)
const lines = (text: string): string[] => text.split('\n').filter((line) => line !== '')

describe('price-store export', () => {
  it('writes every record as NDJSON to stdout, the summary on stderr; importing it gives the same store', async () => {
    const exported = await run(['export', '--db', db])
    expect(exported.code).toBe(0)
    const records = lines(exported.stdout)
    expect(records).toHaveLength(DEMO_RECORDS)
    expect(exported.stderr).toMatch(new RegExp(`^exported 8,640 records as NDJSON in [\\d.]+ s \\([\\d,]+ records/s\\) from ${db}\\n$`))
    const symbols = records.map((line) => (JSON.parse(line) as PriceRecord).symbol)
    expect([...new Set(symbols)]).toEqual(await storeSymbols(db))

    const file = await writeLines(dir, 'all.ndjson', records)
    const copy = join(dir, 'copy')
    expect((await run(['import', '--db', copy, file])).code).toBe(0)
    const again = await run(['export', '--db', copy])
    expect(again.stdout).toBe(exported.stdout)
  })

  it('--output FILE: written whole under its name (replacing an older one), no FILE.partial left; the summary on stdout', async () => {
    const file = join(dir, 'out.ndjson')
    await writeFile(file, 'old contents\n')
    const { code, stdout, stderr } = await run(['export', '--db', db, '--output', file, '--symbol', 'BTC'])
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' })
    expect(stdout).toMatch(new RegExp(`^exported 432 records as NDJSON in .* to ${file}\\n$`))
    const written = lines(await readFile(file, 'utf8'))
    expect(written).toHaveLength(432)
    expect(await exists(`${file}.partial`)).toBe(false)
  })

  it('--symbol (repeatable, comma-separated) and --from/--to select what the full export holds, both ends inclusive', async () => {
    const all = lines((await run(['export', '--db', db])).stdout).map((line) => JSON.parse(line) as PriceRecord)
    const from = all[100]!.timestamp
    const to = all[300]!.timestamp
    const { code, stdout } = await run(['export', '--db', db, '--symbol', 'ETH,BTC', '--symbol', 'AR', '--from', String(from), '--to', String(to)])
    expect(code).toBe(0)
    const expected = all.filter((r) => ['BTC', 'ETH', 'AR'].includes(r.symbol) && r.timestamp >= from && r.timestamp <= to)
    expect(expected.length).toBeGreaterThan(100)
    expect(lines(stdout).map((line) => JSON.parse(line))).toEqual(expected)
    const iso = await run(['export', '--db', db, '--symbol', 'BTC', '--from', new Date(from).toISOString(), '--to', new Date(to).toISOString()])
    expect(lines(iso.stdout)).toHaveLength(expected.filter((r) => r.symbol === 'BTC').length)
  })

  it('--format csv: a header, quoted cells, source and extra fields as JSON; reads back to the records', async () => {
    const temp = await tempDir()
    try {
      const tricky = [
        record('BTC', 1_000, { source: { 'a,b': 'say "hi"', n: [1, -0] }, note: 'line\nbreak', signature: 'x,y' }),
        record('BTC', 2_000, { value: -0 }),
        record('ETH', 1_500),
      ]
      // toExactJson: JSON.stringify would write -0 as 0.
      const input = await writeLines(temp.dir, 'in.ndjson', tricky.map((r) => toExactJson(r)))
      const store = join(temp.dir, 'db')
      expect((await run(['import', '--db', store, input])).code).toBe(0)
      const { code, stdout } = await run(['export', '--db', store, '--format', 'csv'])
      expect(code).toBe(0)
      const [header, ...rows] = parseCsv(stdout)
      expect(header).toEqual(['id', 'symbol', 'provider', 'value', 'signature', 'permawebTx', 'version', 'source', 'timestamp', 'extra'])
      const back = rows.map((cells) => {
        const [id, symbol, provider, value, signature, permawebTx, version, source, timestamp, extra] = cells as string[]
        return { id, symbol, provider, value: JSON.parse(value!), signature, permawebTx, version, source: JSON.parse(source!), timestamp: Number(timestamp), ...(extra === '' ? {} : JSON.parse(extra!)) }
      })
      expect(back).toEqual([tricky[0], tricky[1], tricky[2]])
      expect(Object.is(back[1]!.value, -0)).toBe(true)
      expect(Object.is((back[0]!.source as { n: number[] }).n[1], -0)).toBe(true)
    } finally {
      await temp.cleanup()
    }
  })

  it('refuses bad arguments (exit 2) and writes no file', async () => {
    const file = join(dir, 'never.ndjson')
    const cases: [string[], RegExp][] = [
      [['--formt', 'csv'], /unknown option --formt \(did you mean --format\?\); see "price-store export --help"/],
      [['--format', 'xml'], /--format must be ndjson, csv or parquet \(got "xml"\)/],
      [['--from', '10', '--to', '5'], /--from must not be after --to/],
      [['--from', 'yesterday'], /--from must be a time/],
      [['--symbol', ''], /--symbol needs a symbol/],
      [['--symbol', 'BTC USD'], /\[PRICE_INVALID_SYMBOL\]/],
      [['extra'], /unexpected argument "extra"/],
    ]
    for (const [args, message] of cases) {
      const { code, stdout, stderr } = await run(['export', '--db', db, '--output', file, ...args])
      expect({ code, stdout }, args.join(' ')).toEqual({ code: 2, stdout: '' })
      expect(stderr, args.join(' ')).toMatch(message)
    }
    expect(await exists(file)).toBe(false)
    expect(await exists(`${file}.partial`)).toBe(false)
    const help = await run(['export', '--help'])
    expect(help.code).toBe(0)
    expect(help.stdout).toContain('Usage: price-store export [options]')
  })

  it('Ctrl+C stops it: the partial file is removed and no FILE appears (exit 130)', async () => {
    const file = join(dir, 'stopped.ndjson')
    const memory = memoryIo({ isTTY: true })
    const exit = runCli(['export', '--db', db, '--output', file], memory.io)
    await memory.waitForStderr(/exporting: /)
    memory.signal('SIGINT')
    expect(await exit).toBe(130)
    expect(memory.stderr()).toContain(`price-store export: interrupted by SIGINT: nothing was written to ${file} (the partial file was removed)\n`)
    expect(await readdir(dir)).not.toContain('stopped.ndjson')
    expect(await readdir(dir)).not.toContain('stopped.ndjson.partial')
  })

  it('Ctrl+C while writing to stdout says the output is incomplete (exit 143 for SIGTERM)', async () => {
    const memory = memoryIo({ isTTY: true })
    const exit = runCli(['export', '--db', db], memory.io)
    await memory.waitForStderr(/exporting: /)
    memory.signal('SIGTERM')
    expect(await exit).toBe(143)
    const written = lines(memory.stdout()).length
    expect(written).toBeLessThan(DEMO_RECORDS)
    expect(memory.stderr()).toMatch(/price-store export: interrupted by SIGTERM: the output is incomplete \([\d,]+ records written before the stop\)\n$/)
  })

  it('is refused while another process holds the database (serve does): PRICE_LOCKED in plain words, exit 1', async () => {
    const store = await PriceStore.open(db, { provider: DEFAULT_PROVIDER })
    try {
      for (const command of [['export'], ['stats'], ['backup', join(dir, 'locked-backup')]]) {
        const { code, stderr } = await run([...command, '--db', db])
        expect(code).toBe(1)
        expect(stderr).toContain(`the database at ${db} is in use by another process`)
      }
    } finally {
      await store.close()
    }
  })
})

describe('price-store stats', () => {
  it('prints records, symbols, bytes on disk, format, provider and a row per symbol', async () => {
    const { code, stdout, stderr } = await run(['stats', '--db', db])
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' })
    expect(stdout).toContain(`price-store stats: ${db}\nrecords    8,640\nsymbols    20\non disk    `)
    expect(stdout).toMatch(/^format {5}9$/m)
    expect(stdout).toContain(`provider   redstone, id ${DEFAULT_PROVIDER.id}, public key ${DEFAULT_PROVIDER.publicKey.slice(0, 16)}…`)
    expect(stdout).toMatch(/^symbol +records +first +last$/m)
    expect(stdout).toMatch(/^BTC +432 +2024-05-31T22:\d\d:\d\d\.\d{3}Z +2024-05-31T23:59:\d\d\.\d{3}Z$/m)
  })

  it('--json prints the object store.stats() returns, counts matching the records exported', async () => {
    const { code, stdout } = await run(['stats', '--db', db, '--json'])
    expect(code).toBe(0)
    const stats = JSON.parse(stdout) as { records: number; perSymbol: { symbol: string; records: number; firstTimestamp: number; lastTimestamp: number }[]; disk: { bytes: number; measured: string } }
    expect(stats.records).toBe(DEMO_RECORDS)
    expect(stats.disk.measured).toBe('directory')
    expect(stats.disk.bytes).toBeGreaterThan(0)
    const all = lines((await run(['export', '--db', db])).stdout).map((line) => JSON.parse(line) as PriceRecord)
    for (const entry of stats.perSymbol) {
      const own = all.filter((r) => r.symbol === entry.symbol).map((r) => r.timestamp)
      expect(entry).toEqual({ symbol: entry.symbol, records: own.length, firstTimestamp: Math.min(...own), lastTimestamp: Math.max(...own) })
    }
  })

  it('needs an existing database (exit 1) and refuses unknown options (exit 2)', async () => {
    expect((await run(['stats', '--db', join(dir, 'none')])).code).toBe(1)
    expect((await run(['stats', '--db', db, '--jsn'])).stderr).toContain('unknown option --jsn (did you mean --json?)')
  })
})

describe('price-store backup', () => {
  it('writes a copy that opens with --db and exports the same records', async () => {
    const target = join(dir, 'backup')
    const { code, stdout, stderr } = await run(['backup', '--db', db, target])
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' })
    expect(stdout).toMatch(new RegExp(`^backed up 8,640 records of 20 symbols from ${db} to ${target} in [\\d.]+ s, [\\d.]+ (KiB|MiB)\\n$`))
    expect(await exists(`${target}.partial`)).toBe(false)
    expect((await run(['export', '--db', target])).stdout).toBe((await run(['export', '--db', db])).stdout)
  })

  it('refuses a directory that holds anything (exit 2, nothing changed), and a missing or extra DIR', async () => {
    const before = await readdir(dir)
    const refused = await run(['backup', '--db', db, dir])
    expect(refused.code).toBe(2)
    expect(refused.stderr).toMatch(/is not empty; a backup goes into a new \(or empty\) directory \[PRICE_INVALID_OPTIONS\]\n$/)
    expect(await readdir(dir)).toEqual(before)
    expect((await run(['backup', '--db', db])).stderr).toContain('give the DIR to write the backup into')
    expect((await run(['backup', '--db', db, 'a', 'b'])).code).toBe(2)
  })

  it('Ctrl+C stops it: no DIR, no DIR.partial (exit 130)', async () => {
    const target = join(dir, 'stopped-backup')
    const memory = memoryIo({ isTTY: true })
    const exit = runCli(['backup', '--db', db, target], memory.io)
    await memory.waitForStderr(/backing up: /)
    memory.signal('SIGINT')
    expect(await exit).toBe(130)
    expect(memory.stderr()).toContain('price-store backup: interrupted by SIGINT: no backup was written (the partial copy was removed)\n')
    expect(await exists(target)).toBe(false)
    expect(await exists(`${target}.partial`)).toBe(false)
  })
})

async function storeSymbols(location: string): Promise<string[]> {
  const store = await PriceStore.open(location, { provider: DEFAULT_PROVIDER })
  try {
    return await store.symbols()
  } finally {
    await store.close()
  }
}
