import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { DEFAULT_PROVIDER } from '../../src/cli/config.js'
import { PriceStore } from '../../src/index.js'
import { demoDbForFile, run } from './helpers.js'

let dir: string
let db: string
demoDbForFile((newDir, newDb) => {
  dir = newDir
  db = newDb
})

/** Every form's name as printed, over a span shorter than a day. */
const FORMS = [
  'latest',
  'latest-100',
  'several (all 20 symbols)',
  'as-of (across the span)',
  'range 1 min over the span',
  'range 10 min over the span',
  'range 1 h over the span',
  'candles 1 h over the span',
  'stream (whole span, interval 1)',
]

const escape = (text: string): string => text.replace(/[()]/g, '\\$&')
const number = (text: string): number => Number(text.replaceAll(',', ''))

describe('price-store bench', () => {
  it('times every query form on the store and prints a table of medians and records/s', async () => {
    const { code, stdout, stderr } = await run(['bench', '--db', db, '--runs', '3'])
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' })
    expect(stdout).toContain(`price-store bench: BTC (of 20 symbols) in ${db}, data from 2024-05-31T22:`)
    expect(stdout).toMatch(/^form +records +runs +median ms +records\/s$/m)
    for (const form of FORMS) {
      const row = new RegExp(`^${escape(form)} +([\\d,]+) +(\\d+) +(\\d+\\.\\d{3}) +([\\d,]+)$`, 'm').exec(stdout)
      expect(row, form).not.toBeNull()
      const [records, runs, median, rate] = row!.slice(1).map(number) as [number, number, number, number]
      expect(runs).toBe(3)
      for (const value of [records, median, rate]) expect(Number.isFinite(value) && value >= 0).toBe(true)
    }
    // The counts are the data's own: the stream reads every BTC record, several answers every symbol.
    expect(stdout).toMatch(/^stream \(whole span, interval 1\) +432 +3 /m)
    expect(stdout).toMatch(/^latest-100 +100 /m)
    expect(stdout).toMatch(/^range 1 min over the span +72 /m)
  })

  it('--json, --symbol: the same forms as data', async () => {
    const { code, stdout } = await run(['bench', '--db', db, '--runs', '2', '--symbol', 'ETH', '--json'])
    expect(code).toBe(0)
    const result = JSON.parse(stdout) as { symbol: string; symbols: number; from: number; to: number; runs: number; forms: Record<string, unknown>[] }
    expect(result).toMatchObject({ db, symbol: 'ETH', symbols: 20, runs: 2 })
    expect(result.from).toBeLessThan(result.to)
    expect(result.forms.map((form) => form.form)).toEqual(FORMS)
    for (const form of result.forms) {
      expect(form).toEqual({
        form: expect.any(String),
        records: expect.any(Number),
        runs: 2,
        medianMs: expect.any(Number),
        recordsPerSecond: expect.any(Number),
      })
    }
  })

  it('refuses a database held by a server, in the plain words query uses (exit 1)', async () => {
    const holder = await PriceStore.open(db, { provider: DEFAULT_PROVIDER })
    try {
      const { code, stdout, stderr } = await run(['bench', '--db', db])
      expect({ code, stdout }).toEqual({ code: 1, stdout: '' })
      expect(stderr).toContain(`price-store bench: the database at ${db} is in use by another process (e.g. "price-store serve", an import or another command on it)`)
      expect(stderr).toContain('[PRICE_LOCKED]')
    } finally {
      await holder.close()
    }
  })

  it('an unknown symbol (exit 2), a missing or empty database (exit 1), bad options (exit 2)', async () => {
    const unknown = await run(['bench', '--db', db, '--symbol', 'NOPE'])
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toMatch(/holds no records of "NOPE" \(it holds [A-Z]+, [A-Z]+, .*, \.\.\.\); choose one with --symbol\n$/)
    const missing = await run(['bench', '--db', join(dir, 'missing')])
    expect(missing.code).toBe(1)
    expect(missing.stderr).toContain('there is no database at')
    const empty = join(dir, 'empty')
    await (await PriceStore.open(empty, { provider: DEFAULT_PROVIDER })).close()
    const none = await run(['bench', '--db', empty])
    expect(none.code).toBe(1)
    expect(none.stderr).toContain('holds no records: nothing to time')
    expect((await run(['bench', '--db', db, '--runs', '0'])).code).toBe(2)
  })

  it('--help', async () => {
    const { code, stdout } = await run(['bench', '--help'])
    expect(code).toBe(0)
    for (const option of ['--symbol S', '--runs N', '--json', '--db PATH']) expect(stdout).toContain(option)
    expect((await run(['--help'])).stdout).toContain('bench ')
  })
})
