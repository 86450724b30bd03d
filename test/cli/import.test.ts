import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { DEFAULT_PROVIDER } from '../../src/cli/config.js'
import { PriceStore } from '../../src/index.js'
import { eachTempDb, ndjson, record, run, storedIds, writeLines } from './helpers.js'

let dir: string
let db: string
eachTempDb((newDir, newDb) => {
  dir = newDir
  db = newDb
})

const stored = (): Promise<Record<string, string[]>> => storedIds(db)

describe('price-store import: good files', () => {
  it('imports NDJSON, skipping blank lines, and prints a one-line summary', async () => {
    const file = await writeLines(dir, 'a.ndjson', ['', JSON.stringify(record('BTC', 1)), '   ', JSON.stringify(record('BTC', 2)), JSON.stringify(record('ETH', 1)), ''])
    const { code, stdout, stderr } = await run(['import', '--db', db, file])
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' })
    expect(stdout).toMatch(/^imported 3 records from 1 file in [\d.]+ s \([\d,]+ records\/s\) into .*\n$/)
    expect(await stored()).toEqual({ BTC: ['BTC-1', 'BTC-2'], ETH: ['ETH-1'] })
  })

  it('the summary counts the records stored, not the lines read: a record repeated in its batch counts once', async () => {
    const file = await writeLines(dir, 'repeats.ndjson', ndjson([record('BTC', 1), record('BTC', 2), record('BTC', 1), record('BTC', 1, { id: 'other' })]))
    const { code, stdout } = await run(['import', '--db', db, file])
    expect(code).toBe(0)
    expect(stdout).toMatch(/^imported 3 records from 1 file in .* \(4 read: 1 repeated a record of the same batch\)\n$/)
    expect(Object.values(await stored()).flat()).toHaveLength(3)
  })

  it('imports NDJSON with CRLF line ends and a byte order mark', async () => {
    const file = join(dir, 'crlf.ndjson')
    await writeFile(file, `\uFEFF${JSON.stringify(record('AR', 1))}\r\n${JSON.stringify(record('AR', 2))}\r\n`)
    expect((await run(['import', '--db', db, file])).code).toBe(0)
    expect(await stored()).toEqual({ AR: ['AR-1', 'AR-2'] })
  })

  it('imports a pretty-printed JSON array and a one-line JSON array', async () => {
    const pretty = join(dir, 'pretty.json')
    await writeFile(pretty, JSON.stringify([record('BTC', 1), record('BTC', 2, { evmSignature: '0x1' })], null, 2))
    const compact = join(dir, 'compact.json')
    await writeFile(compact, `  ${JSON.stringify([record('ETH', 1), record('ETH', 2), record('ETH', 3)])}  \n`)
    const empty = join(dir, 'empty.json')
    await writeFile(empty, '[ ]')
    const { code, stdout } = await run(['import', '--db', db, pretty, compact, empty])
    expect(code).toBe(0)
    expect(stdout).toContain('imported 5 records from 3 files')
    expect(await stored()).toEqual({ BTC: ['BTC-1', 'BTC-2'], ETH: ['ETH-1', 'ETH-2', 'ETH-3'] })
  })

  it('reads standard input for "-"', async () => {
    const stdin = ndjson([record('DOGE', 1), record('DOGE', 2)]).join('\n')
    const { code } = await run(['import', '--db', db, '-'], { stdin })
    expect(code).toBe(0)
    expect(await stored()).toEqual({ DOGE: ['DOGE-1', 'DOGE-2'] })
  })

  it('importing the same file twice does not duplicate data', async () => {
    const file = await writeLines(dir, 'a.ndjson', ndjson([record('BTC', 1), record('BTC', 2)]))
    expect((await run(['import', '--db', db, file])).code).toBe(0)
    expect((await run(['import', '--db', db, file])).code).toBe(0)
    expect(await stored()).toEqual({ BTC: ['BTC-1', 'BTC-2'] })
  })

  it('writes in batches of --batch-size and shows progress in place on a terminal', async () => {
    const records = Array.from({ length: 25 }, (_, i) => record('SOL', i))
    const file = await writeLines(dir, 'many.ndjson', ndjson(records))
    const { code, stderr, stdout } = await run(['import', '--db', db, '--batch-size', '10', file], { isTTY: true })
    expect(code).toBe(0)
    expect(stderr).toContain('\r\x1b[2Kimporting: 10 records, ')
    expect(stderr).toMatch(/records\/s/)
    expect(stderr.endsWith('\r\x1b[2K')).toBe(true) // the status line is erased before the summary
    expect(stdout).toContain('imported 25 records')
    expect((await stored()).SOL).toHaveLength(25)
  })
})

describe('price-store import: bad input', () => {
  it('a bad record: FILE:LINE and field reported, its batch not written, earlier batches kept, exit 2', async () => {
    const lines = ndjson([record('BTC', 1), record('BTC', 2), record('BTC', 3), record('BTC', 4)])
    lines.splice(4, 0, '') // a blank line shifts line numbers: the bad record is on line 6
    lines.splice(5, 0, JSON.stringify(record('BTC', 5, { value: 'abc' })))
    lines.push(JSON.stringify(record('BTC', 6)))
    const file = await writeLines(dir, 'bad.ndjson', lines)
    const { code, stderr, stdout } = await run(['import', '--db', db, '--batch-size', '3', file])
    expect(code).toBe(2)
    expect(stdout).toBe('')
    expect(stderr).toContain(`${file}:6: bad record (field "value"): value`)
    expect(stderr).toContain('"abc"')
    expect(stderr).toContain('import stopped: 3 records were written before this batch')
    expect(stderr).toContain(`this batch (3 records, ${file} lines 4-7) was not written`)
    expect(await stored()).toEqual({ BTC: ['BTC-1', 'BTC-2', 'BTC-3'] })
  })

  it('a record for another provider is refused, naming the field', async () => {
    const file = await writeLines(dir, 'other.ndjson', ndjson([record('BTC', 1, { provider: 'someone-else' })]))
    const { code, stderr } = await run(['import', '--db', db, file])
    expect(code).toBe(2)
    expect(stderr).toContain(`${file}:1: bad record (field "provider")`)
    expect(await stored()).toEqual({})
  })

  it('a line that is not an object is a bad record', async () => {
    const file = await writeLines(dir, 'scalar.ndjson', [JSON.stringify(record('BTC', 1)), '42'])
    const { code, stderr } = await run(['import', '--db', db, file])
    expect(code).toBe(2)
    expect(stderr).toContain(`${file}:2: bad record: `)
    expect(await stored()).toEqual({})
  })

  it('invalid JSON: FILE:LINE reported, the batch read so far not written, exit 2', async () => {
    const file = await writeLines(dir, 'broken.ndjson', [...ndjson([record('ETH', 1), record('ETH', 2)]), '{"id": "x",', JSON.stringify(record('ETH', 3))])
    const { code, stderr } = await run(['import', '--db', db, file])
    expect(code).toBe(2)
    expect(stderr).toContain(`${file}:3: invalid JSON`)
    expect(stderr).toContain('this batch (2 records')
    expect(await stored()).toEqual({})
  })

  it('a bad element of a JSON array is reported at the line where it starts', async () => {
    const file = join(dir, 'array.json')
    const text = JSON.stringify([record('AR', 1), record('AR', 2, { timestamp: -5 }), record('AR', 3)], null, 2)
    await writeFile(file, text)
    const badLine = text.split('\n').findIndex((line) => line.includes('"id": "AR-2"')) // the element's "{" is one line up
    const { code, stderr } = await run(['import', '--db', db, file])
    expect(code).toBe(2)
    expect(stderr).toContain(`${file}:${badLine}: bad record (field "timestamp")`)
  })

  it.each([
    ['an unclosed array', '[\n{"a": 1}\n', 3, 'not closed'],
    ['a trailing comma', '[\n{"a": 1},\n]\n', 3, 'empty element'],
    ['text after the array', '[]\nmore\n', 2, 'after the closing'],
    ['an invalid element', '[\n{"a": 1},\n{nope}\n]', 3, 'invalid JSON (array element 1)'],
  ])('a JSON array with %s is refused at its line', async (_name, text, line, message) => {
    const file = join(dir, 'bad.json')
    // A good record before the broken part: a bad one there would be reported first (problems come in line order).
    await writeFile(file, text.replace('{"a": 1}', JSON.stringify(record('AR', 1))))
    const { code, stderr } = await run(['import', '--db', db, file])
    expect(code).toBe(2)
    expect(stderr).toContain(`${file}:${line}: `)
    expect(stderr).toContain(message)
  })

  it('a missing file is reported before anything is written', async () => {
    const good = await writeLines(dir, 'good.ndjson', ndjson([record('BTC', 1)]))
    const { code, stderr } = await run(['import', '--db', db, good, join(dir, 'missing.ndjson')])
    expect(code).toBe(2)
    expect(stderr).toContain('cannot open')
    expect(stderr).toContain('missing.ndjson')
  })

  it('a file given twice is read twice (and stored once)', async () => {
    const file = await writeLines(dir, 'a.ndjson', ndjson([record('BTC', 1)]))
    const { code, stdout } = await run(['import', '--db', db, file, file])
    expect(code).toBe(0)
    // Both copies fall in one batch: the summary counts the one record stored.
    expect(stdout).toMatch(/^imported 1 record from 2 files in .* \(2 read: 1 repeated a record of the same batch\)\n$/)
    expect(await stored()).toEqual({ BTC: ['BTC-1'] })
  })

  it('a directory is reported by name, exit 1', async () => {
    const { code, stderr } = await run(['import', '--db', db, dir])
    expect(code).toBe(1)
    expect(stderr).toContain(`cannot read ${dir}: EISDIR`)
  })

  it('usage errors exit 2 and point to --help', async () => {
    const none = await run(['import', '--db', db])
    expect(none.code).toBe(2)
    expect(none.stderr).toBe('price-store import: give at least one FILE to import ("-" reads standard input); see "price-store import --help"\n')
    expect((await run(['import', '--batch-size', '0', 'x'])).code).toBe(2)
    expect((await run(['import', '--nope', 'x'])).code).toBe(2)
    expect((await run(['import', '-', '-'])).code).toBe(2)
  })

  it('a database in use by another store is reported in plain words', async () => {
    const holder = await PriceStore.open(db, { provider: DEFAULT_PROVIDER })
    try {
      const file = await writeLines(dir, 'a.ndjson', ndjson([record('BTC', 1)]))
      const { code, stderr } = await run(['import', '--db', db, file])
      expect(code).toBe(1)
      expect(stderr).toContain(`the database at ${db} is in use by another process`)
      expect(stderr).toContain('; if it is a server, send the files to it instead: price-store import --url http://HOST:PORT --token-file FILE (POST /prices)')
    } finally {
      await holder.close()
    }
  })

  it('--help', async () => {
    const { code, stdout } = await run(['import', '--help'])
    expect(code).toBe(0)
    expect(stdout).toContain('Usage: price-store import')
    expect(stdout).toContain('--batch-size')
  })
})
