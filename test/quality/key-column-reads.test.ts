/**
 * `store.quality()` reads a sealed hour that is just its paged key column
 * (no delta part, no open row) straight from the column's bytes, read ahead
 * a block of hours at a time, and any other hour as before. Checked on
 * classic-level and memory-level, with caches on and off: the report equals
 * the reference model's over sealed, late (delta part) and open hours and
 * hours with no record, in windows cutting hours; and damage to a key
 * column fails the report with the error the ordinary reading gives
 * (`sources: true` still reads every hour that way), naming the entry.
 */
import type { AbstractSublevel } from 'abstract-level'
import { describe, expect, it } from 'vitest'
import { PriceStore, isPriceStoreError, type QualityReport } from '../../src/index.js'
import { TEST_PROVIDER, referenceQuality, storedRecords } from '../../src/testing/index.js'
import type { InputRecord } from '../../src/testing/records.js'
import { BACKENDS, scratchLocations, KEYS_PART, MEMORY, symbolChunkPrefix, writeAndSeal, type AnyLevel, type Backend, type Location } from '../store/layout-harness.js'
import { rec } from '../support/records.js'

const BASE = Date.UTC(2026, 0, 1)
const STEP = 10_000
const HOUR = 3_600_000
const periodOf = (timestamp: number): number => Math.floor(timestamp / HOUR)

/** A record of `symbol` every `step` ms over `from..to` (values wandering, a repeated timestamp now and then). */
function feed(symbol: string, from: number, to: number, step = STEP): InputRecord[] {
  const out: InputRecord[] = []
  for (let t = from, i = 0; t <= to; t += step, i++) {
    out.push(rec({ symbol, timestamp: t, value: 100 + ((i * 37) % 11) - (i % 5) * 0.25, id: `${symbol}-${t}` }))
    if (i % 97 === 3) out.push(rec({ symbol, timestamp: t, value: 90 + i, id: `${symbol}-${t}-again` }))
  }
  return out
}

function chunkKeyOf(period: number, symbol: string, part: number): Buffer {
  const tail = Buffer.alloc(2)
  tail.writeUInt16BE(part)
  return Buffer.concat([symbolChunkPrefix(period, symbol), tail])
}

type Bytes = AbstractSublevel<AnyLevel, any, Uint8Array, Uint8Array>

async function withChunks<T>(backend: Backend, location: Location, edit: (chunks: Bytes) => Promise<T>): Promise<T> {
  const db = backend.raw(location)
  await db.open()
  try {
    return await edit(db.sublevel<Uint8Array, Uint8Array>('c', { keyEncoding: 'view', valueEncoding: 'view' }) as unknown as Bytes)
  } finally {
    await db.close()
  }
}

/** The report of `sources: true` (which reads every hour the ordinary way) without its sources. */
function withoutSources(report: QualityReport): QualityReport {
  return { ...report, symbols: report.symbols.map(({ sources: _, ...rest }) => rest) }
}

describe.each(BACKENDS)('store.quality over key columns on $name', (backend) => {
  const fresh = scratchLocations(backend, 'price-store-quality-')

  it('answers as the reference model over sealed, late, open and empty hours, caches on and off', async () => {
    const location = await fresh()
    // BTC: 5 hours, the third empty; ETH: hours 0-1 at 1 s; SOL: one record in hour 4.
    const sealed = [
      ...feed('BTC', BASE, BASE + 2 * HOUR - STEP), ...feed('BTC', BASE + 3 * HOUR, BASE + 5 * HOUR - STEP),
      ...feed('ETH', BASE, BASE + 2 * HOUR - 1000, 1000), rec({ symbol: 'SOL', timestamp: BASE + 4 * HOUR + 5, id: 'sol' }),
    ]
    await writeAndSeal(location, sealed)
    // Late records into sealed hours (delta parts once sealed), a rewrite, and an hour still open.
    const late = [rec({ symbol: 'BTC', timestamp: BASE + HOUR + 5, id: 'late' }), rec({ symbol: 'BTC', timestamp: BASE, id: `BTC-${BASE}`, value: 7 })]
    const open = feed('BTC', BASE + 6 * HOUR, BASE + 6 * HOUR + 20 * STEP)
    const all = storedRecords([...sealed, ...late, ...open], TEST_PROVIDER)
    const windows = [
      { from: BASE, to: BASE + 7 * HOUR, now: BASE + 7 * HOUR },
      { from: BASE + 30 * 60_000 + 1, to: BASE + 6 * HOUR + 5 * STEP - 1, now: BASE, interval: HOUR },
      { from: BASE + 30 * 60_000, to: BASE + 4 * HOUR, now: BASE, moves: false, gapThreshold: 15_000 },
      { from: BASE + HOUR + 1, to: BASE + HOUR + 6, now: BASE, symbols: ['BTC', 'DOGE'] },
    ]
    for (const stage of ['late and open rows', 'all sealed']) {
      for (const memory of MEMORY) {
        const store = await PriceStore.open(location, { provider: TEST_PROVIDER, ...memory })
        try {
          if (stage === 'late and open rows') await store.putMany([...late, ...open])
          for (const options of windows) {
            const label = `${stage} ${JSON.stringify(memory)} ${JSON.stringify(options)}`
            expect(await store.quality(options), label).toEqual(referenceQuality(all, options))
            if (options.moves !== false) expect(await store.quality(options), label).toEqual(withoutSources(await store.quality({ ...options, sources: true })))
          }
        } finally {
          await store.close()
        }
      }
    }
  }, 60_000)

  it('fails on a damaged key column, or a damaged value header in it, as the ordinary reading does, naming the key column', async () => {
    const location = await fresh()
    await writeAndSeal(location, [...feed('BTC', BASE, BASE + 3 * HOUR - STEP), ...feed('ETH', BASE, BASE + HOUR)])
    const period = periodOf(BASE + HOUR)
    const key = chunkKeyOf(period, 'BTC', KEYS_PART)
    const column = Buffer.from((await withChunks(backend, location, (chunks) => chunks.get(key))) as Uint8Array)
    // The last record's value header starts 9 bytes before the end: unknown flags there.
    const badHeader = Buffer.from(column)
    badHeader[badHeader.length - 9] = 0x80
    for (const [label, bytes] of [['cut', column.subarray(0, column.length - 3)], ['bad header', badHeader]] as const) {
      await withChunks(backend, location, (chunks) => chunks.put(key, bytes))
      for (const memory of MEMORY) {
        const store = await PriceStore.open(location, { provider: TEST_PROVIDER, ...memory })
        try {
          const window = { from: BASE, to: BASE + 3 * HOUR, now: BASE }
          const error = await store.quality(window).then(() => undefined, (err: unknown) => err)
          const ordinary = await store.quality({ ...window, sources: true }).then(() => undefined, (err: unknown) => err)
          expect(isPriceStoreError(error, 'PRICE_CORRUPT_VALUE'), `${label}: ${String(error)}`).toBe(true)
          expect((error as Error).message, label).toBe((ordinary as Error).message)
          expect((error as Error).message, label).toContain(`chunk BTC@${period * HOUR}`)
          // Outside the damaged hour the report still answers.
          const before = { from: BASE, to: BASE + HOUR - 1, now: BASE }
          expect((await store.quality(before)).symbols.map((s) => s.records)).toEqual([HOUR / STEP + 4, HOUR / STEP + 4])
        } finally {
          await store.close()
        }
      }
    }
  }, 60_000)
})
