/**
 * store.export(), store.stats() and store.backup() on memory-level and
 * classic-level, against the reference model (src/testing): the stored
 * records are computed from the writes alone, never read back from the store.
 */
import { mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { MemoryLevel } from 'memory-level'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { PriceStore } from '../../src/index.js'
import type { NewPriceRecord, PriceRecord, StoreStats } from '../../src/index.js'
import { BACKUP_PARTIAL_MARKER } from '../../src/store/services/backup.js'
import { T0, TEST_PROVIDER, makeRecord } from '../../src/testing/records.js'
import { compareRecords, compareUtf8, storedRecords } from '../../src/testing/reference-model.js'
import { rejectsCode } from '../support/assertions.js'

const HOUR = 3_600_000

let root: string
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'price-store-export-'))
})
afterAll(async () => {
  await rm(root, { recursive: true, force: true })
})
let dirs = 0
const freshDir = (): string => join(root, `d${dirs++}`)

/** The model's records in export order: symbols by UTF-8 bytes, then (timestamp, id). */
function modelExport(writes: readonly NewPriceRecord[], keep: (record: PriceRecord) => boolean = () => true): string[] {
  return storedRecords(writes, TEST_PROVIDER)
    .filter(keep)
    .sort((a, b) => compareUtf8(a.symbol, b.symbol) || compareRecords(a, b))
    .map((record) => JSON.stringify(record))
}

/** The model's statistics (the parts that do not depend on the database). */
function modelStats(writes: readonly NewPriceRecord[]) {
  const records = storedRecords(writes, TEST_PROVIDER)
  const symbols = [...new Set(records.map((record) => record.symbol))].sort(compareUtf8)
  const perSymbol = symbols.map((symbol) => {
    const own = records.filter((record) => record.symbol === symbol).map((record) => record.timestamp)
    return { symbol, records: own.length, firstTimestamp: Math.min(...own), lastTimestamp: Math.max(...own) }
  })
  return { records: records.length, symbols: symbols.length, perSymbol }
}

async function collect(records: AsyncIterable<PriceRecord>): Promise<string[]> {
  const out: string[] = []
  for await (const record of records) out.push(JSON.stringify(record))
  return out
}

/**
 * Writes that leave sealed hours, an hour both sealed and open (a late
 * record and a rewrite of a sealed record) and an open hour: hours 0-3 are
 * sealed once a record of hour 5 arrives, hour 1 then gets late records.
 */
function layeredWrites(): NewPriceRecord[][] {
  const early: NewPriceRecord[] = []
  for (let hour = 0; hour < 4; hour++) {
    for (const symbol of ['BTC', 'ETH', 'BTC-USD', '\u{1F600}', '\uFF61']) {
      early.push(makeRecord({ symbol, timestamp: T0 + hour * HOUR + 7_000 }), makeRecord({ symbol, timestamp: T0 + hour * HOUR + 1_800_000 }))
    }
  }
  // Two ids at one timestamp: both kept, ordered by UTF-8 bytes.
  early.push(makeRecord({ symbol: 'BTC', timestamp: T0 + 60_000, id: '\uFF61' }), makeRecord({ symbol: 'BTC', timestamp: T0 + 60_000, id: '\u{1F600}' }))
  const later = [makeRecord({ symbol: 'BTC', timestamp: T0 + 5 * HOUR + 1 }), makeRecord({ symbol: 'SOL', timestamp: T0 + 5 * HOUR + 2, extra: 'kept' })]
  const late = [
    makeRecord({ symbol: 'ETH', timestamp: T0 + HOUR + 5 }),
    makeRecord({ symbol: 'BTC', timestamp: T0 + HOUR + 7_000, value: -1.5 }), // replaces a sealed record
  ]
  return [early, later, late]
}

interface Backend {
  readonly name: string
  location(): MemoryLevel<string, string> | string
}

const BACKENDS: readonly Backend[] = [
  { name: 'memory-level', location: () => new MemoryLevel() },
  { name: 'classic-level', location: freshDir },
]

describe.each(BACKENDS)('export, stats and backup on $name', (backend) => {
  let store: PriceStore
  let writes: NewPriceRecord[]

  beforeEach(async () => {
    store = await PriceStore.open(backend.location(), { provider: TEST_PROVIDER, cache: { recordsPerSymbol: 0 } })
    writes = []
    for (const batch of layeredWrites()) {
      await store.putMany(batch)
      writes.push(...batch)
    }
  })
  afterEach(async () => {
    await store.close()
  })

  describe('store.export()', () => {
    it('gives every record, symbols in the store order, each oldest first, as latest() returns them', async () => {
      const exported = await collect(store.export())
      expect(exported).toEqual(modelExport(writes))
      const [newest] = await store.latest('SOL')
      expect(exported).toContain(JSON.stringify(newest))
    })

    it('reads a mix of sealed and open hours (the premise of the test above)', async () => {
      const stats = await store.stats()
      expect(stats.unsealedRecords).toBeGreaterThan(0)
      expect(stats.unsealedRecords).toBeLessThan(stats.records)
    })

    it('selects symbols (in the store order, once, unknown ones giving nothing) and a window, both ends inclusive', async () => {
      const from = T0 + HOUR + 5
      const to = T0 + 3 * HOUR + 7_000
      const symbols = ['ETH', 'nope', 'BTC', 'ETH']
      const exported = await collect(store.export({ symbols, from, to }))
      expect(exported).toEqual(modelExport(writes, (r) => ['BTC', 'ETH'].includes(r.symbol) && r.timestamp >= from && r.timestamp <= to))
      expect(exported.length).toBeGreaterThan(4)
      expect(await collect(store.export({ symbols: [] }))).toEqual([])
      expect(await collect(store.export({ from: T0 + 5 * HOUR + 2 }))).toEqual(modelExport(writes, (r) => r.timestamp >= T0 + 5 * HOUR + 2))
    })

    it('refuses bad options at once, with codes', async () => {
      const call = (options: unknown) => () => store.export(options as never)
      expect(call({ symbols: 'BTC' })).toThrow(expect.objectContaining({ code: 'PRICE_INVALID_SYMBOL' }))
      expect(call({ symbols: ['BTC USD'] })).toThrow(expect.objectContaining({ code: 'PRICE_INVALID_SYMBOL' }))
      expect(call({ from: 5, to: 4 })).toThrow(expect.objectContaining({ code: 'PRICE_INVALID_RANGE' }))
      expect(call({ from: -1 })).toThrow(expect.objectContaining({ code: 'PRICE_INVALID_RANGE' }))
      expect(call({ to: 1.5 })).toThrow(expect.objectContaining({ code: 'PRICE_INVALID_RANGE' }))
      expect(call('all')).toThrow(expect.objectContaining({ code: 'PRICE_INVALID_QUERY' }))
      expect(call({ signal: 'stop' })).toThrow(expect.objectContaining({ code: 'PRICE_INVALID_QUERY' }))
    })

    it('reads one view: writes made while it runs are not in it', async () => {
      const expected = modelExport(writes)
      const iterator = store.export()[Symbol.asyncIterator]()
      const first = await iterator.next()
      await store.putMany([makeRecord({ symbol: 'BTC', timestamp: T0 + 2 * HOUR }), makeRecord({ symbol: 'AAA', timestamp: T0 })])
      const rest: string[] = [JSON.stringify(first.value)]
      for (let step = await iterator.next(); step.done !== true; step = await iterator.next()) rest.push(JSON.stringify(step.value))
      expect(rest).toEqual(expected)
      expect((await collect(store.export())).length).toBe(expected.length + 2)
    })

    it('an abort makes the next pull reject with PRICE_ABORTED', async () => {
      const controller = new AbortController()
      const iterator = store.export({ signal: controller.signal })[Symbol.asyncIterator]()
      await iterator.next()
      controller.abort()
      await rejectsCode(iterator.next(), 'PRICE_ABORTED')
    })
  })

  describe('store.stats()', () => {
    it('counts records and gives first and last timestamps per symbol, as the model does', async () => {
      const stats = await store.stats()
      expect({ records: stats.records, symbols: stats.symbols, perSymbol: stats.perSymbol }).toEqual(modelStats(writes))
      expect(stats.formatVersion).toBe(3)
      expect(stats.provider).toEqual({ name: TEST_PROVIDER.name, id: TEST_PROVIDER.id, publicKey: TEST_PROVIDER.publicKey })
      if (backend.name === 'memory-level') expect(stats.disk).toBeNull()
      else expect(stats.disk).toEqual({ bytes: expect.any(Number), measured: 'directory' })
      expect(JSON.parse(JSON.stringify(stats))).toEqual(stats)
    })

    it('counts an empty store as empty', async () => {
      const empty = await PriceStore.open(new MemoryLevel(), { provider: TEST_PROVIDER })
      const stats = await empty.stats()
      await empty.close()
      expect({ records: stats.records, symbols: stats.symbols, perSymbol: stats.perSymbol, unsealedRecords: stats.unsealedRecords }).toEqual({
        records: 0, symbols: 0, perSymbol: [], unsealedRecords: 0,
      })
    })
  })

  describe('store.backup()', () => {
    it('writes a copy that opens with the same provider and answers the same, while the store takes writes', async () => {
      const target = freshDir()
      const before = await collect(store.export())
      const progress: number[] = []
      const backup = store.backup(target, { onProgress: (p) => progress.push(p.records) })
      await store.putMany([makeRecord({ symbol: 'BTC', timestamp: T0 + 6 * HOUR })])
      const result = await backup
      expect(result.location).toBe(target)
      expect(result.stats.records).toBe(modelStats(writes).records)
      expect(progress.length).toBeGreaterThan(0)
      expect(await readdir(root)).not.toContain(`${target.split('/').at(-1)}.partial`)
      expect(await readdir(target)).not.toContain(BACKUP_PARTIAL_MARKER)
      const copy = await PriceStore.open(target, { provider: TEST_PROVIDER })
      try {
        expect(await collect(copy.export())).toEqual(before)
        expect(await copy.latest('BTC', { limit: 50 })).toEqual(await store.latest('BTC', { limit: 50, to: T0 + 5 * HOUR + 1 }))
      } finally {
        await copy.close()
      }
      await rejectsCode(PriceStore.open(target, { provider: { ...TEST_PROVIDER, id: 'other' } }), 'PRICE_PROVIDER_MISMATCH')
    })

    it('refuses a target that is a file or a directory holding anything, and changes nothing', async () => {
      const full = freshDir()
      await mkdir(full)
      await writeFile(join(full, 'keep.txt'), 'mine')
      await rejectsCode(store.backup(full), 'PRICE_INVALID_OPTIONS')
      expect(await readdir(full)).toEqual(['keep.txt'])
      const file = `${freshDir()}.txt`
      await writeFile(file, 'mine')
      await rejectsCode(store.backup(file), 'PRICE_INVALID_OPTIONS')
      await rejectsCode(store.backup(''), 'PRICE_INVALID_OPTIONS')
      await expect(stat(`${full}.partial`)).rejects.toThrow()
    })

    it('accepts an empty directory; removes a backup leftover at DIR.partial, refuses anything else there', async () => {
      const empty = freshDir()
      await mkdir(empty)
      await store.backup(empty)
      expect((await readdir(empty)).length).toBeGreaterThan(0)

      const target = freshDir()
      await mkdir(`${target}.partial`)
      await writeFile(join(`${target}.partial`, 'theirs'), 'x')
      await rejectsCode(store.backup(target), 'PRICE_INVALID_OPTIONS')
      expect(await readdir(`${target}.partial`)).toEqual(['theirs'])
      await writeFile(join(`${target}.partial`, BACKUP_PARTIAL_MARKER), '')
      await store.backup(target)
      await expect(stat(`${target}.partial`)).rejects.toThrow()
    })

    it('an aborted backup rejects with PRICE_ABORTED and leaves neither DIR nor DIR.partial', async () => {
      const target = freshDir()
      const controller = new AbortController()
      controller.abort()
      await rejectsCode(store.backup(target, { signal: controller.signal }), 'PRICE_ABORTED')
      const late = new AbortController()
      const backup = store.backup(target, { signal: late.signal, onProgress: () => late.abort() })
      await rejectsCode(backup, 'PRICE_ABORTED')
      await expect(stat(target)).rejects.toThrow()
      await expect(stat(`${target}.partial`)).rejects.toThrow()
    })
  })
})

describe('stats of a classic-level store all sealed', () => {
  it('counts from the heads index alone after close and reopen', async () => {
    const location = freshDir()
    const writes = layeredWrites().flat()
    const store = await PriceStore.open(location, { provider: TEST_PROVIDER })
    await store.putMany(writes)
    await store.close()
    const reopened = await PriceStore.open(location, { provider: TEST_PROVIDER })
    try {
      const stats: StoreStats = await reopened.stats()
      expect(stats.unsealedRecords).toBe(0)
      expect({ records: stats.records, symbols: stats.symbols, perSymbol: stats.perSymbol }).toEqual(modelStats(writes))
      expect(stats.disk?.bytes).toBeGreaterThan(0)
    } finally {
      await reopened.close()
    }
  })
})
