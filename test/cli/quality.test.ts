/**
 * `price-store quality`: the report as JSON (store.quality()'s object, checked
 * against the reference model) and as a table; bad arguments exit 2.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { join } from 'node:path'
import { DEFAULT_PROVIDER } from '../../src/cli/config.js'
import { PriceStore } from '../../src/index.js'
import { referenceQuality, storedRecords } from '../../src/testing/index.js'
import { record, run, tempDir } from './helpers.js'

const BASE = Date.UTC(2026, 0, 1)
const STEP = 10_000
const HOUR = 3_600_000
let db: string
let cleanup: () => Promise<void>
// BTC every 10 s for an hour with a 5-minute outage; ETH every 20 s, stale for the last half hour.
const inputs = [
  ...Array.from({ length: 360 }, (_, i) => BASE + i * STEP).filter((t) => t < BASE + 20 * 60_000 || t >= BASE + 25 * 60_000).map((t, i) => record('BTC', t, { value: 100 + (i % 3) })),
  ...Array.from({ length: 90 }, (_, i) => record('ETH', BASE + i * 2 * STEP, { value: 10 })),
]

beforeAll(async () => {
  const temp = await tempDir()
  cleanup = temp.cleanup
  db = join(temp.dir, 'db')
  const store = await PriceStore.open(db, { provider: DEFAULT_PROVIDER })
  await store.putMany(inputs as never)
  await store.close()
})

afterAll(async () => {
  await cleanup?.()
})

const WINDOW = ['--from', String(BASE), '--to', String(BASE + HOUR), '--now', String(BASE + HOUR)]

describe('price-store quality', () => {
  it('--json prints the report store.quality() gives', async () => {
    const { code, stdout, stderr } = await run(['quality', '--db', db, ...WINDOW, '--interval', '600000', '--json'])
    expect(stderr).toBe('')
    expect(code).toBe(0)
    const want = referenceQuality(storedRecords(inputs, DEFAULT_PROVIDER), { from: BASE, to: BASE + HOUR, now: BASE + HOUR, interval: 600_000 })
    expect(JSON.parse(stdout)).toEqual(JSON.parse(JSON.stringify(want)))
  })

  it('prints a table: a row per symbol, the gaps over the threshold, the buckets', async () => {
    const { code, stdout } = await run(['quality', '--db', db, ...WINDOW, '--symbol', 'BTC,ETH', '--interval', '1800000'])
    expect(code).toBe(0)
    const lines = stdout.split('\n')
    expect(lines[0]).toBe(`price-store quality: ${db}`)
    expect(lines).toContainEqual(expect.stringMatching(/^symbol +records +last +age +median gap +p99 gap +max gap +over +dups +largest move$/))
    expect(lines).toContainEqual(expect.stringMatching(/^BTC +330 +2026-01-01T00:59:50.000Z +10s +10s +10s +5.2m +1 +0 +/))
    expect(lines).toContainEqual(expect.stringMatching(/^ETH +90 +2026-01-01T00:29:40.000Z +30.3m +20s +20s +20s +0 +0 +-$/))
    expect(lines).toContain('BTC: 1 gaps over 30s')
    expect(lines).toContain('  2026-01-01T00:19:50.000Z .. 2026-01-01T00:25:00.000Z  5.2m')
    expect(lines).toContainEqual(expect.stringMatching(/^ {2}2026-01-01T00:30:00.000Z +0 +- +- +0 +0$/))
  })

  it('--no-moves and --sources are passed on; --gap-threshold names the threshold', async () => {
    const fast = JSON.parse((await run(['quality', '--db', db, ...WINDOW, '--no-moves', '--gap-threshold', '15000', '--json'])).stdout)
    expect(fast.gapThreshold).toBe(15_000)
    expect(fast.symbols.map((s: { moves: unknown }) => s.moves)).toEqual([null, null])
    const sources = JSON.parse((await run(['quality', '--db', db, ...WINDOW, '--symbol', 'ETH', '--sources', '--json'])).stdout)
    expect(sources.symbols[0].sources.counts).toBeDefined()
  })

  it.each([
    [['--interval', '1h'], /--interval must be a whole number of milliseconds/],
    [['--gap-threshold', '0'], /--gap-threshold must be a whole number/],
    [['--from', 'yesterday'], /from/],
    [['--symbol', ''], /--symbol needs a symbol/],
    [['--from', String(BASE + HOUR), '--to', String(BASE)], /--from must not be after --to/],
  ])('%j exits 2 with a message', async (args, message) => {
    const { code, stderr } = await run(['quality', '--db', db, ...args])
    expect(code).toBe(2)
    expect(stderr).toMatch(message)
  })

  it('a bad symbol exits 2 with its code; --help prints the options', async () => {
    const bad = await run(['quality', '--db', db, ...WINDOW, '--symbol', 'bad symbol'])
    expect(bad.code).toBe(2)
    expect(bad.stderr).toMatch(/PRICE_INVALID_SYMBOL/)
    const help = await run(['quality', '--help'])
    expect(help.code).toBe(0)
    expect(help.stdout).toMatch(/^Usage: price-store quality/)
    expect((await run(['--help'])).stdout).toMatch(/^ {2}quality +how healthy each feed is/m)
  })
})
