import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { eachTempDb, ndjson, record, run, storedIds, writeLines } from './helpers.js'

let dir: string
let db: string
eachTempDb((newDir, newDb) => {
  dir = newDir
  db = newDb
})

describe('price-store import --skip-bad', () => {
  it('writes the good records and reports each bad one by FILE:LINE and field, on its own line', async () => {
    const lines = [
      JSON.stringify(record('BTC', 1)),
      JSON.stringify(record('BTC', 2, { value: 'abc' })),
      '{"id": "x",',
      '',
      JSON.stringify(record('BTC', 3)),
      JSON.stringify(record('BTC', 4, { provider: 'someone-else' })),
      JSON.stringify(record('BTC', 5)),
    ]
    const file = await writeLines(dir, 'mixed.ndjson', lines)
    const { code, stdout, stderr } = await run(['import', '--db', db, '--batch-size', '2', '--skip-bad', file])
    expect(code).toBe(0)
    expect(stderr.split('\n')).toEqual([
      expect.stringMatching(new RegExp(`^price-store import: skipped ${file}:2: bad record \\(field "value"\\): value must be a finite number \\(got "abc"\\)$`)),
      expect.stringMatching(new RegExp(`^price-store import: skipped ${file}:3: invalid JSON: `)),
      expect.stringMatching(new RegExp(`^price-store import: skipped ${file}:6: bad record \\(field "provider"\\): `)),
      '',
    ])
    expect(stdout).toMatch(/^imported 3 records from 1 file in .* \(6 read: 3 bad records skipped\)\n$/)
    expect(await storedIds(db)).toEqual({ BTC: ['BTC-1', 'BTC-3', 'BTC-5'] })
  })

  it('skips a bad element of a JSON array; a broken array still stops the import (exit 2)', async () => {
    const file = join(dir, 'array.json')
    await writeFile(file, `[\n${JSON.stringify(record('AR', 1))},\n{nope},\n${JSON.stringify(record('AR', 2, { timestamp: -5 }))},\n${JSON.stringify(record('AR', 3))}\n]\n`)
    const { code, stdout, stderr } = await run(['import', '--db', db, '--skip-bad', file])
    expect(code).toBe(0)
    expect(stderr).toContain(`skipped ${file}:3: invalid JSON (array element 1)`)
    expect(stderr).toContain(`skipped ${file}:4: bad record (field "timestamp")`)
    expect(stdout).toContain('imported 2 records from 1 file')
    expect(await storedIds(db)).toEqual({ AR: ['AR-1', 'AR-3'] })

    const broken = join(dir, 'broken.json')
    await writeFile(broken, '[\n{"a": 1}\n')
    expect((await run(['import', '--db', db, '--skip-bad', broken])).code).toBe(2)
  })

  it('on a terminal, the status line is erased before each skipped record is reported', async () => {
    const records = Array.from({ length: 30 }, (_, i) => record('SOL', i, i % 7 === 3 ? { value: null } : {}))
    const file = await writeLines(dir, 'some-bad.ndjson', ndjson(records))
    const { code, stderr } = await run(['import', '--db', db, '--batch-size', '5', '--skip-bad', file], { isTTY: true })
    expect(code).toBe(0)
    const reports = [...stderr.matchAll(/price-store import: skipped/g)]
    expect(reports).toHaveLength(4)
    for (const report of reports) {
      const before = stderr.slice(0, report.index)
      expect(before === '' || before.endsWith('\n') || before.endsWith('\r\x1b[2K')).toBe(true)
    }
    expect(stderr.endsWith('\r\x1b[2K') || stderr.endsWith('\n')).toBe(true)
  })

  it('without --skip-bad a bad record still stops the import, exit 2', async () => {
    const file = await writeLines(dir, 'bad.ndjson', ndjson([record('BTC', 1), record('BTC', 2, { value: 'abc' })]))
    expect((await run(['import', '--db', db, file])).code).toBe(2)
    expect(await storedIds(db)).toEqual({})
  })
})

describe('price-store import progress', () => {
  it('shows percent and time left when the input size is known (files)', async () => {
    const file = await writeLines(dir, 'many.ndjson', ndjson(Array.from({ length: 25 }, (_, i) => record('SOL', i))))
    const { code, stderr } = await run(['import', '--db', db, '--batch-size', '10', file], { isTTY: true })
    expect(code).toBe(0)
    expect(stderr).toMatch(/\r\x1b\[2Kimporting: 10 records, [\d,]+ records\/s, \d+ %, \d+ s left/)
  })

  it('shows no percent for standard input, whose size is not known', async () => {
    const stdin = ndjson(Array.from({ length: 25 }, (_, i) => record('SOL', i))).join('\n')
    const { code, stderr } = await run(['import', '--db', db, '--batch-size', '10', '-'], { stdin, isTTY: true })
    expect(code).toBe(0)
    expect(stderr).toMatch(/importing: 10 records, [\d,]+ records\/s\r/)
    expect(stderr).not.toContain('%')
  })
})
