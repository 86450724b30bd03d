/**
 * Consistent reads under concurrent writes (SPEC §5): every answer reflects
 * all or none of any batch, on the real on-disk backend, with the hot tail on
 * and off, and with `openBytes` 0, so the hour is sealed again after every
 * batch while the readers run (their answers then mix sealed chunks, heads
 * and open rows).
 *
 * Batch g writes one record per symbol, all at the same timestamp with value
 * g (and, from generation 3 on, introduces a new symbol as well). Readers
 * run while the batches commit and check each answer on its own: a
 * several-tokens answer holds one generation for every symbol (a partial
 * batch would mix g and g-1, or list a new symbol without its record); a
 * latest-N answer and a range answer hold consecutive generations ending
 * at one the several answer could have shown.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { PriceStore } from '../../src/index.js'
import type { NewPriceRecord, PriceRecord, PriceStoreOptions } from '../../src/index.js'

const PROVIDER = Object.freeze({ name: 'redstone', id: 'consistency-provider', publicKey: 'consistency-key' })
const BASE_SYMBOLS = ['BTC', 'BTC-USD', 'ETH', '__proto__', 'Ω€']
const T0 = 1_700_000_000_000
const GENERATIONS = 120
const dirs: string[] = []

afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true })
})

/** Symbols that exist after generation g: the base ones, plus NEW-3 .. NEW-g. */
const newSymbol = (g: number): string => `NEW-${g}`

function batch(g: number): NewPriceRecord[] {
  const symbols = g >= 3 ? [...BASE_SYMBOLS, newSymbol(g)] : BASE_SYMBOLS
  return symbols.flatMap((symbol) => [
    // A filler record a little earlier, in the same 1-s bucket: no answer may hold it without its partner.
    { id: `f${g}`, symbol, provider: PROVIDER.id, value: g, signature: `s${g}`, permawebTx: 't', version: '0.4', source: {}, timestamp: T0 + g * 1000 + 100 },
    { id: `g${g}`, symbol, provider: PROVIDER.id, value: g, signature: `s${g}`, permawebTx: 't', version: '0.4', source: {}, timestamp: T0 + g * 1000 + 500 },
  ])
}

function checkSeveral(answer: Record<string, PriceRecord>, context: string, all = true): number {
  const values = new Set(BASE_SYMBOLS.map((symbol) => answer[symbol]?.value))
  expect(values.size, `${context}: several mixes generations ${[...values].join(', ')}`).toBe(1)
  const [g] = values as Set<number | undefined>
  if (g === undefined) return 0
  // Every NEW-k with k <= g is there, with its only record (generation k); none later.
  for (const symbol of Object.keys(answer)) {
    const match = /^NEW-(\d+)$/.exec(symbol)
    if (match !== null) {
      expect(Number(match[1]), `${context}: ${symbol} listed before its batch`).toBeLessThanOrEqual(g)
      expect(answer[symbol]?.value, context).toBe(Number(match[1]))
    }
  }
  if (all) for (let k = 3; k <= g; k++) expect(Object.hasOwn(answer, newSymbol(k)), `${context}: ${newSymbol(k)} missing at generation ${g}`).toBe(true)
  return g
}

function checkLatest(records: readonly PriceRecord[], context: string): void {
  // Newest first, pairs (g's main record, then its filler 400 ms earlier), generations descending without gaps.
  const values = records.map((record) => record.value)
  if (values.length === 0) return
  expect(records[0]?.id.startsWith('g'), `${context}: the newest record is a filler, its partner is missing: ${records.map((r) => r.id)}`).toBe(true)
  for (let i = 1; i < values.length; i++) {
    const expected = i % 2 === 1 ? values[i - 1] : (values[i - 1] as number) - 1
    expect(values[i], `${context}: ${values.join(',')}`).toBe(expected)
  }
}

function checkRange(records: readonly PriceRecord[], context: string): void {
  // One record per 1-s bucket from generation 1: the bucket's latest is g's main record, so 1, 2, ..., n.
  records.forEach((record, i) => {
    expect(record.value, `${context}: ${records.map((r) => r.value).join(',')}`).toBe(i + 1)
    expect(record.id, context).toBe(`g${i + 1}`)
  })
}

function checkMinutes(records: readonly PriceRecord[], context: string): void {
  // At a minute interval: each minute's latest is the main record of the last generation in that minute.
  const minute = (g: number): number => Math.floor((T0 + g * 1000 + 500) / 60_000)
  records.forEach((record, i) => {
    expect(record.id, `${context}: a filler without its partner`).toBe(`g${record.value}`)
    if (i < records.length - 1) expect(minute(record.value + 1), `${context}: ${records.map((r) => r.value).join(',')}`).toBe(minute(record.value) + 1)
  })
}

/** The hot tail off, tiny and default; then sealing after every batch, with default and with small head and chunk caches. */
const SETTINGS: readonly Partial<PriceStoreOptions>[] = [
  { cache: { recordsPerSymbol: 0 } },
  { cache: { recordsPerSymbol: 3 } },
  { cache: { recordsPerSymbol: 128 } },
  { cache: { recordsPerSymbol: 3 }, openBytes: 0 },
  { cache: { recordsPerSymbol: 0, headBytes: 4_000, chunkBytes: 6_000 }, openBytes: 0 },
]

describe('reads during writes see whole batches only (classic-level)', () => {
  for (const settings of SETTINGS) {
    const label = JSON.stringify(settings)
    it(`settings ${label}`, async () => {
      const dir = await mkdtemp(join(tmpdir(), 'price-store-consistency-'))
      dirs.push(dir)
      const store = await PriceStore.open(dir, { provider: PROVIDER, ...settings })
      try {
        let writing = true
        let reads = 0
        const generationsSeen = new Set<number>()
        const reader = async (kind: number): Promise<void> => {
          let lastSeen = 0
          while (writing) {
            const context = `settings ${label}, reader ${kind}, read ${reads++}`
            if (kind === 0) {
              const g = checkSeveral(await store.several(), context)
              expect(g, `${context}: went back in time`).toBeGreaterThanOrEqual(lastSeen)
              lastSeen = g
              generationsSeen.add(g)
            } else if (kind === 1) {
              checkSeveral(await store.several([...BASE_SYMBOLS].reverse()), context, false)
            } else if (kind === 2) {
              checkLatest(await store.latest(BASE_SYMBOLS[kind % BASE_SYMBOLS.length] as string, { limit: 6 }), context)
            } else if (kind === 3) {
              checkRange(await store.range('ETH', { from: 0, to: Number.MAX_SAFE_INTEGER, interval: 1000 }), context)
            } else {
              checkMinutes(await store.range('__proto__', { from: T0, to: T0 + GENERATIONS * 1000, interval: 60_000 }), context)
              const answer = await store.query(new URLSearchParams({ symbol: 'BTC-USD', limit: '4' }))
              checkLatest(answer as PriceRecord[], context)
            }
            // Let the writer in now and then, without timing anything.
            await new Promise((resolve) => setImmediate(resolve))
          }
        }
        const readers = [0, 1, 2, 3, 4].map((kind) => reader(kind))
        try {
          for (let g = 1; g <= GENERATIONS; g++) await store.putMany(batch(g))
        } finally {
          writing = false
        }
        await Promise.all(readers)
        // Not vacuous: the readers really ran between the batches.
        expect(generationsSeen.size).toBeGreaterThan(2)
        expect(checkSeveral(await store.several(), 'final')).toBe(GENERATIONS)
      } finally {
        await store.close()
      }
    })
  }
})
