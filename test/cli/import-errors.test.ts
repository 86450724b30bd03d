/**
 * Issue 23, point 7: import problems are reported in line order (a bad value on line 31 before invalid JSON on
 * line 41), `--errors-file` writes the records left out as NDJSON, and counts of one are singular.
 */
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { eachTempDb, ndjson, record, run, storedIds, writeLines } from './helpers.js'

let dir: string
let db: string
eachTempDb((newDir, newDb) => {
  dir = newDir
  db = newDb
})

/** 45 lines: good records, a bad value on line 31, a line that is not JSON on line 41. */
function linesWithTwoProblems(): string[] {
  const lines = ndjson(Array.from({ length: 45 }, (_, i) => record('BTC', i + 1)))
  lines[30] = JSON.stringify(record('BTC', 31, { value: 'abc' }))
  lines[40] = '{"id": "broken",'
  return lines
}

describe('import reports problems in line order', () => {
  it('without --skip-bad: the bad value on line 31 stops the import, not the invalid JSON on line 41', async () => {
    const file = await writeLines(dir, 'two-problems.ndjson', linesWithTwoProblems())
    const { code, stdout, stderr } = await run(['import', '--db', db, file])
    expect({ code, stdout }).toEqual({ code: 2, stdout: '' })
    expect(stderr).toContain(`price-store import: ${file}:31: bad record (field "value"): value must be a finite number (got "abc")`)
    expect(stderr).not.toContain(':41:')
    expect(stderr).toContain('import stopped: 0 records were written before this batch; this batch (40 records, ')
    expect(stderr).toContain('was not written. Fix the record and run the same import again (records written are replaced), or add --skip-bad to write the good records and report each bad one.')
  })

  it('with --skip-bad, through a JSON array too: each report in line order', async () => {
    const file = join(dir, 'array.json')
    const elements = [record('AR', 1), record('AR', 2, { timestamp: -5 }), '{nope}', record('AR', 4, { symbol: '' }), record('AR', 5)]
    await writeFile(file, `[\n${elements.map((e) => (typeof e === 'string' ? e : JSON.stringify(e))).join(',\n')}\n]\n`)
    const { code, stderr } = await run(['import', '--db', db, '--skip-bad', file])
    expect(code).toBe(0)
    expect([...stderr.matchAll(/skipped \S+:(\d+):/g)].map((m) => Number(m[1]))).toEqual([3, 4, 5])
  })
})

describe('import --errors-file FILE', () => {
  it('writes each record left out as one JSON line (file, line, code, field, message, raw), implies --skip-bad', async () => {
    const lines = linesWithTwoProblems()
    const file = await writeLines(dir, 'two-problems.ndjson', lines)
    const errors = join(dir, 'errors.ndjson')
    const { code, stdout } = await run(['import', '--db', db, '--errors-file', errors, file])
    expect(code).toBe(0)
    expect(stdout).toMatch(/^imported 43 records from 1 file in .* \(45 read: 2 bad records skipped\)\n$/)
    const written = (await readFile(errors, 'utf8')).trimEnd().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>)
    expect(written).toEqual([
      { file, line: 31, code: 'PRICE_INVALID_RECORD', field: 'value', message: 'value must be a finite number (got "abc")', raw: lines[30] },
      { file, line: 41, code: 'INVALID_JSON', message: expect.stringMatching(/^invalid JSON: /), raw: '{"id": "broken",' },
    ])
    expect((await storedIds(db)).BTC).toHaveLength(43)
  })

  it('is created empty when nothing is left out; a file it cannot write is exit 2', async () => {
    const file = await writeLines(dir, 'good.ndjson', ndjson([record('BTC', 1)]))
    const errors = join(dir, 'errors.ndjson')
    await writeFile(errors, 'old content\n')
    const { code, stdout } = await run(['import', '--db', db, '--errors-file', errors, file])
    expect(code).toBe(0)
    // One record, one file: singular.
    expect(stdout).toMatch(/^imported 1 record from 1 file in /)
    expect(await readFile(errors, 'utf8')).toBe('')
    const bad = await run(['import', '--db', db, '--errors-file', join(dir, 'missing-dir', 'errors.ndjson'), file])
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain('cannot write the errors file')
  })
})
