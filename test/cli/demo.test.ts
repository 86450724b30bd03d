import { readFile, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { MemoryLevel } from 'memory-level'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { DEFAULT_PROVIDER } from '../../src/cli/config.js'
import { DEMO_MARKER, markDemo } from '../../src/cli/demo-marker.js'
import { writeMarkedDemo } from '../../src/cli/load-demo.js'
import { DEMO_END, DEMO_TOKENS, countDemoRecords, generateDemoRecords } from '../../src/demo/demo-data.js'
import { PriceStore } from '../../src/index.js'
import { memoryIo, record, run, startServe, tempDir, writeLines } from './helpers.js'

const providerId = DEFAULT_PROVIDER.id
const HOUR = 3_600_000

describe('generateDemoRecords', () => {
  it('is deterministic: same options, same records; another seed, other records', () => {
    const a = [...generateDemoRecords({ providerId, durationMs: HOUR })]
    const b = [...generateDemoRecords({ providerId, durationMs: HOUR })]
    expect(a).toEqual(b)
    const c = [...generateDemoRecords({ providerId, durationMs: HOUR, seed: 'other' })]
    expect(c.map((r) => r.id)).not.toEqual(a.map((r) => r.id))
    expect(c.map((r) => r.timestamp)).not.toEqual(a.map((r) => r.timestamp))
  })

  it('by default: 20 tokens incl. BTC, ETH, AR, stETH, USDC.e, every 10 s for 2 days before DEMO_END', () => {
    const symbols = DEMO_TOKENS.map((token) => token.symbol)
    expect(symbols).toHaveLength(20)
    expect(symbols).toEqual(expect.arrayContaining(['BTC', 'ETH', 'AR', 'stETH', 'USDC.e']))
    expect(countDemoRecords({ providerId })).toBe(20 * 6 * 60 * 48)
    const first = generateDemoRecords({ providerId }).next().value!
    expect(first.timestamp).toBeGreaterThanOrEqual(DEMO_END - 2 * 24 * HOUR)
    expect(first.timestamp).toBeLessThan(DEMO_END - 2 * 24 * HOUR + 1000)
  })

  it('has realistic fields: uuid ids, lite EVM signatures (no Arweave signature), 43-char permawebTx, version 0.4, 3-6 sources', () => {
    const records = [...generateDemoRecords({ providerId, durationMs: 10 * 60_000 })]
    expect(records).toHaveLength(60 * 20)
    for (const record of records) {
      expect(Object.keys(record)).toEqual(['id', 'symbol', 'provider', 'value', 'liteEvmSignature', 'permawebTx', 'version', 'source', 'timestamp'])
      expect(record.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
      expect(record.liteEvmSignature).toMatch(/^0x[0-9a-f]{128}(1b|1c)$/)
      expect(record.permawebTx).toMatch(/^[A-Za-z0-9_-]{43}$/)
      expect(record.version).toBe('0.4')
      expect(record.provider).toBe(providerId)
      const quotes = Object.values(record.source)
      expect(quotes.length).toBeGreaterThanOrEqual(3)
      expect(quotes.length).toBeLessThanOrEqual(6)
      expect(record.value).toBeGreaterThanOrEqual(Math.min(...quotes))
      expect(record.value).toBeLessThanOrEqual(Math.max(...quotes))
    }
    expect(new Set(records.map((r) => r.id)).size).toBe(records.length)
  })

  it('signed: false gives the same records with a random 344-char base64 signature instead', () => {
    const signed = [...generateDemoRecords({ providerId, durationMs: 10 * 60_000 })]
    const unsigned = [...generateDemoRecords({ providerId, durationMs: 10 * 60_000, signed: false })]
    expect(unsigned.map(({ signature: _s, ...rest }) => rest)).toEqual(signed.map(({ liteEvmSignature: _l, ...rest }) => rest))
    for (const record of unsigned) {
      expect(Object.keys(record)).toEqual(['id', 'symbol', 'provider', 'value', 'signature', 'permawebTx', 'version', 'source', 'timestamp'])
      expect(record.signature).toMatch(/^[A-Za-z0-9+/]{342}==$/)
    }
  })

  it('one fetch every 10 s: all tokens of a moment share its timestamp and permawebTx', () => {
    const records = [...generateDemoRecords({ providerId, durationMs: 5 * 60_000 })]
    const moments = new Map<number, Set<string>>()
    for (const record of records) moments.set(record.timestamp, (moments.get(record.timestamp) ?? new Set()).add(record.permawebTx))
    expect(moments.size).toBe(30)
    for (const txs of moments.values()) expect(txs.size).toBe(1)
    const times = [...moments.keys()]
    for (let i = 1; i < times.length; i++) {
      expect(Math.floor(times[i]! / 10_000) - Math.floor(times[i - 1]! / 10_000)).toBe(1)
    }
  })

  it('prices stay realistic over 2 days: BTC within 30 % of its start, stablecoins within 1 % of the peg', () => {
    const tokens = DEMO_TOKENS.filter((token) => ['BTC', 'USDC.e', 'DAI'].includes(token.symbol))
    let btcDrift = 0
    let pegDrift = 0
    for (const record of generateDemoRecords({ providerId, tokens })) {
      if (record.symbol === 'BTC') btcDrift = Math.max(btcDrift, Math.abs(record.value / 67_500 - 1))
      else pegDrift = Math.max(pegDrift, Math.abs(record.value - 1))
    }
    expect(btcDrift).toBeGreaterThan(0.001) // it does move
    expect(btcDrift).toBeLessThan(0.3)
    expect(pegDrift).toBeGreaterThan(0)
    expect(pegDrift).toBeLessThan(0.01)
  })

  it('every record is accepted by the store', async () => {
    const store = await PriceStore.open(new MemoryLevel(), { provider: DEFAULT_PROVIDER })
    try {
      const records = [...generateDemoRecords({ providerId, durationMs: 10 * 60_000 })]
      expect(await store.putMany(records)).toBe(records.length)
      expect(await store.symbols()).toHaveLength(20)
    } finally {
      await store.close()
    }
  })
})

describe('price-store demo', () => {
  let dir: string
  let cleanup: () => Promise<void>
  beforeEach(async () => {
    ;({ dir, cleanup } = await tempDir())
  })
  afterEach(async () => {
    await cleanup()
  })

  it('writes the demo set (here 0.01 days), and writing it again does not duplicate it', async () => {
    const db = join(dir, 'db')
    for (let i = 0; i < 2; i++) {
      const { code, stdout } = await run(['demo', '--db', db, '--days', '0.01'])
      expect(code).toBe(0)
      expect(stdout).toContain('wrote 1,720 demo records (20 tokens, 0.01 days up to 2024-06-01T00:00:00.000Z)')
    }
    const store = await PriceStore.open(db, { provider: DEFAULT_PROVIDER })
    try {
      expect(await store.symbols()).toHaveLength(20)
      expect(await store.latest('USDC.e', { limit: 3000 })).toHaveLength(86)
    } finally {
      await store.close()
    }
  })

  it('--end moves the data set; a custom provider id is written into the records', async () => {
    const db = join(dir, 'db')
    // Another provider's id comes with its key (issue 23: never the default key under another id).
    const provider = ['--provider-id', 'my-node', '--provider-name', 'mine', '--provider-public-key', DEFAULT_PROVIDER.publicKey]
    const { code, stderr } = await run(['demo', '--db', db, '--days', '0.001', '--end', '2025-01-01T00:00:00Z', ...provider])
    expect(code, stderr).toBe(0)
    const store = await PriceStore.open(db, { provider: { name: 'mine', id: 'my-node', publicKey: DEFAULT_PROVIDER.publicKey } })
    try {
      const [btc] = await store.latest('BTC')
      expect(btc!.provider).toBe('my-node')
      expect(btc!.timestamp).toBeLessThan(Date.UTC(2025, 0, 1))
      expect(btc!.timestamp).toBeGreaterThan(Date.UTC(2025, 0, 1) - 100_000)
    } finally {
      await store.close()
    }
  })

  it.each([
    [['--days', '0']],
    [['--days', 'two']],
    [['--end', 'yesterday-ish']],
    [['--end', '1000']],
    [['extra']],
  ])('refuses %j with exit 2', async (args) => {
    const { code, stderr } = await run(['demo', '--db', join(dir, 'db'), ...args])
    expect(code).toBe(2)
    expect(stderr).toContain('price-store demo')
  })

  it('marks a database it wrote into while empty as a demo; not one that held records, and importing removes the mark', async () => {
    const fresh = join(dir, 'fresh')
    expect((await run(['demo', '--db', fresh, '--days', '0.001'])).code).toBe(0)
    expect(JSON.parse(await readFile(join(fresh, DEMO_MARKER), 'utf8'))).toMatchObject({ demo: true, writtenBy: 'price-store demo' })
    const file = await writeLines(dir, 'mine.ndjson', [JSON.stringify(record('MINE', 1_700_000_000_000))])
    expect((await run(['import', '--db', fresh, file])).code).toBe(0)
    await expect(stat(join(fresh, DEMO_MARKER))).rejects.toThrow()
    // Demo data added to someone's records is not a demo database.
    const owned = join(dir, 'owned')
    expect((await run(['import', '--db', owned, file])).code).toBe(0)
    expect((await run(['demo', '--db', owned, '--days', '0.001'])).code).toBe(0)
    await expect(stat(join(owned, DEMO_MARKER))).rejects.toThrow()
  })

  it('--help', async () => {
    const { code, stdout } = await run(['demo', '--help'])
    expect(code).toBe(0)
    expect(stdout).toContain('USDC.e')
  })

  describe('an interrupted demo is known as such and finished by the next start', () => {
    const marker = async (db: string): Promise<Record<string, unknown>> => JSON.parse(await readFile(join(db, DEMO_MARKER), 'utf8'))
    /** Records of each symbol in the store at `db`. */
    async function counts(db: string): Promise<Record<string, number>> {
      const store = await PriceStore.open(db, { provider: DEFAULT_PROVIDER })
      try {
        const result: Record<string, number> = {}
        for (const symbol of await store.symbols()) result[symbol] = (await store.latest(symbol, { limit: 3000 })).length
        return result
      } finally {
        await store.close()
      }
    }
    const recipe = { durationMs: 864_000, end: DEMO_END } // 0.01 days: 86 records of each token

    it('the mark says "not finished" from before the first batch until after the last', async () => {
      const db = join(dir, 'db')
      const store = await PriceStore.open(db, { provider: DEFAULT_PROVIDER })
      try {
        let batches = 0
        // A store that fails on the second batch, as a process killed half way stops writing.
        const failing = {
          provider: store.provider,
          putMany: async (records: unknown[]) => {
            if (++batches === 2) throw new Error('killed')
            return records.length
          },
        } as unknown as PriceStore
        await expect(writeMarkedDemo(failing, db, memoryIo().io, 'price-store demo', { ...recipe, batchSize: 100 })).rejects.toThrow('killed')
        expect(await marker(db)).toMatchObject({ demo: true, finished: false, writtenBy: 'price-store demo', recipe })
        await writeMarkedDemo(store, db, memoryIo().io, 'price-store demo', recipe)
        expect(await marker(db)).toMatchObject({ demo: true, finished: true, recipe })
      } finally {
        await store.close()
      }
    })

    it('serve --demo-if-empty finishes a demo marked unfinished, saying so, and serves the whole set', async () => {
      const db = join(dir, 'db')
      const store = await PriceStore.open(db, { provider: DEFAULT_PROVIDER })
      try {
        // What an interrupted "price-store demo --days 0.01" leaves: the mark, and the first 500 of its 1,720 records.
        await markDemo(db, { finished: false, writtenBy: 'price-store demo', recipe })
        await store.putMany([...generateDemoRecords({ providerId, ...recipe })].slice(0, 500))
      } finally {
        await store.close()
      }
      expect(Object.values(await counts(db)).reduce((a, b) => a + b)).toBe(500)
      const { memory, exit, banner } = await startServe(['--db', db, '--demo-if-empty'])
      memory.signal()
      expect(await exit).toBe(0)
      expect(memory.stderr()).toContain(`the demo data set at ${db} is not finished (its writing by "price-store demo" was interrupted): finishing it`)
      expect(memory.stderr()).toContain('wrote 1,720 demo records')
      expect(banner).toContain(`price-store is serving 20 symbols from ${db}`)
      expect(Object.values(await counts(db))).toEqual(Array(20).fill(86))
      expect(await marker(db)).toMatchObject({ demo: true, finished: true, recipe })
    })

    it('a finished demo, and one marked by an older release (no "finished": it marked only complete demos), is served as it is', async () => {
      const db = join(dir, 'db')
      expect((await run(['demo', '--db', db, '--days', '0.001'])).code).toBe(0)
      expect(await marker(db)).toMatchObject({ finished: true })
      for (const _ of ['finished', 'older release']) {
        const { memory, exit } = await startServe(['--db', db, '--demo-if-empty'])
        memory.signal()
        expect(await exit).toBe(0)
        expect(memory.stderr()).not.toContain('demo')
        await writeFile(join(db, DEMO_MARKER), JSON.stringify({ demo: true, writtenBy: 'price-store demo' }))
      }
    })

    it('price-store demo run again over its own unfinished demo marks it finished', async () => {
      const db = join(dir, 'db')
      expect((await run(['demo', '--db', db, '--days', '0.01'])).code).toBe(0)
      await markDemo(db, { finished: false, writtenBy: 'price-store demo', recipe })
      expect((await run(['demo', '--db', db, '--days', '0.01'])).code).toBe(0)
      expect(await marker(db)).toMatchObject({ finished: true })
    })
  })
})
