import { cp, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { DEFAULT_PROVIDER } from '../../src/cli/config.js'
import { runCli } from '../../src/cli/run-cli.js'
import { PriceStore } from '../../src/index.js'
import type { PriceRecord } from '../../src/index.js'
import { referencePrune } from '../../src/testing/reference-model.js'
import { memoryIo, run, startServe, tempDir } from './helpers.js'

const END = Date.parse('2024-06-02T00:00:00Z')
const HOUR = 3_600_000
let template: string
let tmp: string
let cleanup: () => Promise<void>
let copies = 0

beforeAll(async () => {
  const temp = await tempDir()
  cleanup = temp.cleanup
  tmp = temp.dir
  template = join(tmp, 'template')
  expect((await run(['demo', '--db', template, '--days', '1', '--end', String(END)])).code).toBe(0)
}, 300_000) // 172,800 signed records: about 15 s alone, minutes on a machine busy with other tests

afterAll(async () => {
  await cleanup()
})

/** A fresh copy of the demo database. */
async function demoDb(): Promise<string> {
  const db = join(tmp, `db-${copies++}`)
  await cp(template, db, { recursive: true })
  return db
}

/** Every record in the database, in returned shape. */
async function everything(db: string): Promise<PriceRecord[]> {
  const store = await PriceStore.open(db, { provider: DEFAULT_PROVIDER, limits: { maxLimit: 1_000_000 } })
  try {
    const out: PriceRecord[] = []
    for (const symbol of await store.symbols()) out.push(...(await store.latest(symbol, { limit: 1_000_000 })))
    return out
  } finally {
    await store.close()
  }
}

const sortById = (records: readonly PriceRecord[]): PriceRecord[] => [...records].sort((a, b) => `${a.symbol}${a.id}`.localeCompare(`${b.symbol}${b.id}`))

describe('price-store prune', () => {
  it('removes the records before T (ms or ISO 8601), exactly as the model says, and reports it', async () => {
    const db = await demoDb()
    const all = await everything(db)
    const before = END - 5 * HOUR - 17 * 60_000
    const model = referencePrune(all, before)
    const { code, stdout, stderr } = await run(['prune', '--db', db, '--before', new Date(before).toISOString()])
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' })
    expect(stdout).toBe(
      `removed ${model.result.records.toLocaleString('en-US')} records in ${model.result.hours} hours ` +
        `(records before ${new Date(before).toISOString()} (${before})) from ${db}\n`,
    )
    expect(sortById(await everything(db))).toEqual(sortById(model.left))
  })

  it('--symbol prunes one symbol; --dry-run counts the same and removes nothing', async () => {
    const db = await demoDb()
    const all = await everything(db)
    const before = END + HOUR
    const model = referencePrune(all, before, 'ETH')
    const dry = await run(['prune', '--db', db, '--before', String(before), '--symbol', 'ETH', '--dry-run'])
    expect(dry.code).toBe(0)
    expect(dry.stdout).toBe(
      `would remove ${model.result.records.toLocaleString('en-US')} records in ${model.result.hours} hours; would leave ETH with no record ` +
        `(records of ETH before ${new Date(before).toISOString()} (${before})) from ${db}\n`,
    )
    expect((await everything(db)).length).toBe(all.length)
    const real = await run(['prune', '--db', db, '--before', String(before), '--symbol', 'ETH'])
    expect(real.stdout).toBe(dry.stdout.replace('would remove', 'removed').replace('would leave', 'left'))
    expect(sortById(await everything(db))).toEqual(sortById(model.left))
    // Two runs of the CLI over a day of demo data: about 15 s on a quiet machine, several times that on a busy one.
  }, 180_000)

  it('Ctrl+C stops between steps: every record at or after T is kept, and running it again finishes', async () => {
    const db = await demoDb()
    const all = await everything(db)
    const before = END - HOUR - 1
    const model = referencePrune(all, before)
    const memory = memoryIo({ isTTY: true })
    // Ctrl+C the moment the status line is first drawn (after the first turn of steps), not a tick later.
    let asked = false
    const stderr = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        memory.io.stderr.write(chunk)
        if (!asked && chunk.toString().includes('pruning: ')) memory.signal('SIGINT')
        asked ||= chunk.toString().includes('pruning: ')
        callback()
      },
    })
    // One step per turn on any machine: every read of the clock is a second on, so a turn's time slice
    // is spent after its first step (on a fast machine a real 40 ms slice could prune the whole day at once).
    let now = performance.now()
    const clock = vi.spyOn(performance, 'now').mockImplementation(() => (now += 1_000))
    try {
      expect(await runCli(['prune', '--db', db, '--before', String(before)], { ...memory.io, stderr })).toBe(130)
    } finally {
      clock.mockRestore()
    }
    const report = /price-store prune: stopped by SIGINT: removed ([0-9,]+) records? in [0-9,]+ hours? so far; every record at or after .* is kept\. Run the same command again to finish\.\n$/.exec(memory.stderr())
    expect(report, memory.stderr()).not.toBeNull()
    // The records it says it removed are gone; every record at or after T is there.
    const left = await everything(db)
    const removed = Number(report![1]!.replaceAll(',', ''))
    expect(removed).toBeLessThan(model.result.records)
    expect(left.length).toBe(all.length - removed)
    const kept = new Set(left.map((r) => `${r.symbol} ${r.id}`))
    expect(model.left.every((r) => kept.has(`${r.symbol} ${r.id}`))).toBe(true)
    expect((await run(['prune', '--db', db, '--before', String(before)])).code).toBe(0)
    expect(sortById(await everything(db))).toEqual(sortById(model.left))
  })

  it('refuses bad arguments with exit code 2 and a missing database with 1, changing nothing', async () => {
    const db = await demoDb()
    const count = (await everything(db)).length
    const cases: [string[], RegExp][] = [
      [[], /give --before T/],
      [['--before', 'yesterday'], /--before must be a time/],
      [['--before', '-5'], /needs a value|--before must be a time/],
      [['--before', '1', '--symbl', 'BTC'], /unknown option --symbl \(did you mean --symbol\?\)/],
      [['--before', '1', '--symbol', 'A,B'], /PRICE_INVALID_SYMBOL/],
      [['--before', '1', 'extra'], /unexpected argument "extra"/],
    ]
    for (const [args, message] of cases) {
      const { code, stderr } = await run(['prune', '--db', db, ...args])
      expect({ code, args }).toEqual({ code: 2, args })
      expect(stderr).toMatch(message)
    }
    expect((await everything(db)).length).toBe(count)
    const missing = await run(['prune', '--db', join(tmp, 'nothing-here'), '--before', '1'])
    expect(missing.code).toBe(1)
    expect(missing.stderr).toMatch(/there is no database at/)
  })

  it('--help describes it', async () => {
    const { code, stdout } = await run(['prune', '--help'])
    expect(code).toBe(0)
    expect(stdout).toMatch(/^Usage: price-store prune --before T/)
    expect((await run(['--help'])).stdout).toMatch(/prune --before T/)
  })
})

describe('price-store serve: retention', () => {
  /** A database of one BTC record an hour for three days before END. */
  async function threeDays(): Promise<string> {
    const db = join(tmp, `db-${copies++}`)
    const store = await PriceStore.open(db, { provider: DEFAULT_PROVIDER })
    const start = END - 72 * HOUR
    await store.putMany(Array.from({ length: 72 }, (_, k) => ({
      id: `r${k}`, symbol: 'BTC', provider: DEFAULT_PROVIDER.id, value: k, signature: 's', permawebTx: 't', version: '0.4', source: {},
      timestamp: start + k * HOUR + 300_000,
    })))
    await store.close()
    return db
  }

  /** The timestamps GET /prices returns for BTC once they number `count` (the prune runs in the background). */
  async function waitForCount(endpoint: string, count: number): Promise<number[]> {
    for (let i = 0; ; i++) {
      const answer = (await (await fetch(`${endpoint}?symbol=BTC&limit=100`)).json()) as { timestamp: number }[]
      if (answer.length === count || i === 100) return answer.map((r) => r.timestamp)
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  }

  it('--retention-days N keeps the N days before the newest record hour, whole hours', async () => {
    const db = await threeDays()
    const { memory, exit, endpoint } = await startServe(['--db', db, '--retention-days', '1'])
    // The newest record is in hour END - 1 h: the 24 hours before it and that hour stay.
    const kept = await waitForCount(endpoint, 25)
    expect(Math.min(...kept)).toBe(END - 25 * HOUR + 300_000)
    // Said before the store opened (and so before it removed anything): the 47 records of the hours before.
    const said = memory.stderr().split('\n').filter((line) => line.startsWith('retention'))
    expect(said).toEqual([
      `retention (1 day) removes 47 records now: every record from ${new Date(END - 72 * HOUR + 300_000).toISOString()} ` +
        `to before ${new Date(END - 25 * HOUR).toISOString()} (1 day before the newest record's hour, or the current hour if earlier)`,
    ])
    memory.signal('SIGINT')
    expect(await exit).toBe(0)
  })

  it('says which symbols retention empties, and says nothing when it removes nothing', async () => {
    const db = await threeDays()
    const store = await PriceStore.open(db, { provider: DEFAULT_PROVIDER })
    await store.putMany([{ id: 'e0', symbol: 'ETH', provider: DEFAULT_PROVIDER.id, value: 1, signature: 's', permawebTx: 't', version: '0.4', source: {}, timestamp: END - 70 * HOUR }])
    await store.close()
    const nothing = await startServe(['--db', db, '--retention-days', '5'])
    nothing.memory.signal('SIGINT')
    expect(await nothing.exit).toBe(0)
    expect(nothing.memory.stderr()).not.toMatch(/retention/)
    const { memory, exit, endpoint } = await startServe(['--db', db, '--retention-days', '2'])
    expect(memory.stderr()).toContain(
      `retention (2 days) removes 24 records now: every record from ${new Date(END - 72 * HOUR + 300_000).toISOString()} ` +
        `to before ${new Date(END - 49 * HOUR).toISOString()} (2 days before the newest record's hour, or the current hour if earlier); ` +
        'it leaves ETH with no record\n',
    )
    expect(await waitForCount(endpoint, 49)).toHaveLength(49)
    memory.signal('SIGINT')
    expect(await exit).toBe(0)
  })

  it('"retention" in --config, overridden by the flag; a bad value exits 2', async () => {
    const db = await threeDays()
    const config = join(tmp, 'retention.json')
    await writeFile(config, JSON.stringify({ retention: { days: 2 } }))
    const served = await startServe(['--db', db, '--config', config])
    expect((await waitForCount(served.endpoint, 49)).length).toBe(49)
    served.memory.signal('SIGINT')
    expect(await served.exit).toBe(0)
    await writeFile(config, JSON.stringify({ retention: { days: 0 } }))
    const bad = await run(['serve', '--db', db, '--config', config])
    expect(bad.code).toBe(2)
    expect(bad.stderr).toMatch(/retention\.days.*PRICE_INVALID_OPTIONS/)
    expect((await run(['serve', '--db', db, '--retention-days', '0'])).code).toBe(2)
  })
})
