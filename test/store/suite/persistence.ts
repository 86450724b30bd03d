/**
 * Persistence, only for backends whose data outlives the database object: data
 * survives close and reopen, a second open is refused while the first holds the
 * lock, an unknown or missing format version, and a damaged value named by its key.
 */
import { describe, expect, it } from 'vitest'
import { PriceStore } from '../../../src/index.js'
import { readChunkPart, readCompactId } from '../../../src/keys/chunk-codec.js'
import { readHeads } from '../../../src/keys/heads-codec.js'
import { PERIOD_MS } from '../../../src/keys/key-layout.js'
import { readLogEntry } from '../../../src/keys/log-codec.js'
import { T0 } from '../../../src/testing/records.js'
import { expectExact, rejectsCode } from '../../support/assertions.js'
import { rec, type Input } from '../../support/records.js'
import { type FeatureTests, useStores } from './context.js'
import { H, HOUR, MAX, collect } from './model.js'

export const persistenceTests: FeatureTests = (suite) => {
  const persistent = suite.persistent === true
  describe('persistence', () => {
    const { newDb, openStore, seeded, options } = useStores(suite)

    it.skipIf(!persistent)('data survives close and reopen', async () => {
      const { store, model } = await seeded()
      await store.close()
      const again = await openStore()
      expect(await again.symbols()).toEqual(model.symbols())
      expectExact(await again.several(), model.several())
      for (const symbol of model.symbols()) {
        expectExact(await again.latest(symbol, { limit: 3000 }), model.latest(symbol, { limit: 3000 }))
        expectExact(await again.range(symbol, { from: 0, to: MAX, interval: 1 }), model.range(symbol, { from: 0, to: MAX, interval: 1 }))
      }
      // The reopened store knows its symbols: a write to an existing symbol does not duplicate it.
      await again.put(rec({ symbol: 'ETH', timestamp: H + 9 * HOUR }))
      expect(await again.symbols()).toEqual(model.symbols())
    })

    it.skipIf(!persistent)('a second open of the same location while the first is open → PRICE_LOCKED; the first still works', async () => {
      const first = await openStore()
      await first.put(rec({ timestamp: T0 }))
      const err = await rejectsCode(PriceStore.open(newDb(), options()), 'PRICE_LOCKED')
      expect(err.cause).toBeDefined()
      await first.put(rec({ timestamp: T0 + 1 }))
      expect((await first.latest('BTC', { limit: 10 })).map((r) => r.timestamp)).toEqual([T0 + 1, T0])
      expect(first.status).toBe('open')
      await first.close()
      const after = await openStore()
      expect((await after.latest('BTC', { limit: 10 })).length).toBe(2)
    })

    it.skipIf(!persistent)('a database whose format is "99" → PRICE_UNSUPPORTED_FORMAT, and the location is not left locked', async () => {
      const store = await openStore()
      await store.put(rec())
      await store.close()
      const raw = newDb()
      await raw.open()
      const meta = raw.sublevel<string, string>('m', { keyEncoding: 'utf8', valueEncoding: 'utf8' })
      expect(await meta.get('format')).toBeDefined()
      await meta.put('format', '99')
      await raw.close()
      const err = await rejectsCode(PriceStore.open(newDb(), options()), 'PRICE_UNSUPPORTED_FORMAT')
      expect(err.message).toContain('99')
      const check = newDb()
      await check.open()
      await check.close()
    })

    it.skipIf(!persistent)('a database with records but no format version → PRICE_UNSUPPORTED_FORMAT', async () => {
      const raw = newDb()
      await raw.open()
      const prices = raw.sublevel<Uint8Array, Uint8Array>('p', { keyEncoding: 'view', valueEncoding: 'view' })
      await prices.put(Buffer.from('BTC\u0000\u0000\u0000\u0000\u0000\u0000\u0000\u0000\u0001id'), Buffer.from([1, 2, 3]))
      await raw.close()
      await rejectsCode(PriceStore.open(newDb(), options()), 'PRICE_UNSUPPORTED_FORMAT')
    })

    it.skipIf(!persistent)('a corrupted value → PRICE_CORRUPT_VALUE naming the key, while other symbols still answer', async () => {
      const { store, model } = await seeded()
      const [newest] = model.latest('BTC')
      const target = newest as Input
      await store.close()
      // Damage every stored copy of that record's value (the log, a chunk part, a heads entry: wherever
      // sealing has put it), found with the codecs: the flags byte becomes 0xff, the length stays.
      const raw = newDb()
      await raw.open()
      const sublevel = (name: string) => raw.sublevel<Uint8Array, Uint8Array>(name, { keyEncoding: 'view', valueEncoding: 'view' })
      const symbolBytes = Buffer.from('BTC', 'utf8')
      const isTarget = (symbol: string, timestamp: number, id: string) =>
        symbol === 'BTC' && timestamp === target.timestamp && id === target.id
      let damaged = 0
      const damage = async (level: ReturnType<typeof sublevel>, key: Uint8Array, value: Buffer, at: number[]): Promise<void> => {
        if (at.length === 0) return
        for (const offset of at) value[offset] = 0xff
        await level.put(key, value)
        damaged += at.length
      }
      const log = sublevel('l')
      for (const [key, stored] of await log.iterator().all()) {
        const value = Buffer.from(stored)
        const at: number[] = []
        readLogEntry(value, (symbol, timestamp, idStart, idEnd, valueStart) => {
          if (isTarget(symbol, timestamp, value.toString('utf8', idStart, idEnd))) at.push(valueStart)
        })
        await damage(log, key, value, at)
      }
      const chunks = sublevel('c')
      for (const [stored, bytes] of await chunks.iterator().all()) {
        // period (u32) · symbol · 0x00 · part (u16)
        const key = Buffer.from(stored)
        if (!key.subarray(4, key.length - 3).equals(symbolBytes)) continue
        const value = Buffer.from(bytes)
        const at: number[] = []
        readChunkPart(value, key.readUInt32BE(0) * PERIOD_MS, (timestamp, idStart, idEnd, compact, valueStart) => {
          const id = compact ? readCompactId(value, idStart) : value.toString('utf8', idStart, idEnd)
          if (isTarget('BTC', timestamp, id)) at.push(valueStart)
        })
        await damage(chunks, key, value, at)
      }
      const heads = sublevel('h')
      for (const [stored, bytes] of await heads.iterator().all()) {
        // symbol · 0x00 · period (u32)
        const key = Buffer.from(stored)
        if (!key.subarray(0, key.length - 5).equals(symbolBytes)) continue
        const value = Buffer.from(bytes)
        const at: number[] = []
        readHeads(value, key.readUInt32BE(key.length - 4) * PERIOD_MS, (timestamp, idStart, idEnd, valueStart) => {
          if (isTarget('BTC', timestamp, value.toString('utf8', idStart, idEnd))) at.push(valueStart)
        })
        await damage(heads, key, value, at)
      }
      expect(damaged, 'the record was found in the log or in a chunk').toBeGreaterThan(0)
      await raw.close()

      const again = await openStore()
      const namesKey = (err: { message: string; details: { key?: string } }) => {
        for (const text of [err.message, err.details.key ?? '']) {
          expect(text).toContain('BTC')
          expect(text).toContain(String(target.timestamp))
          expect(text).toContain(target.id as string)
        }
      }
      namesKey(await rejectsCode(again.latest('BTC'), 'PRICE_CORRUPT_VALUE'))
      namesKey(await rejectsCode(again.query({ symbol: 'BTC' }), 'PRICE_CORRUPT_VALUE'))
      namesKey(await rejectsCode(again.range('BTC', { from: 0, to: MAX, interval: 1 }), 'PRICE_CORRUPT_VALUE'))
      namesKey(await rejectsCode(again.several(['ETH', 'BTC']), 'PRICE_CORRUPT_VALUE'))
      namesKey(await rejectsCode(collect(again.rangeStream('BTC', { from: 0, to: MAX, interval: 1 })), 'PRICE_CORRUPT_VALUE'))
      // Other symbols answer.
      expectExact(await again.latest('ETH', { limit: 10 }), model.latest('ETH', { limit: 10 }))
      expectExact(await again.several(['ETH', 'BTC-USD']), model.several(['ETH', 'BTC-USD']))
      expectExact(await again.range('BTC-USD', { from: 0, to: MAX, interval: 1 }), model.range('BTC-USD', { from: 0, to: MAX, interval: 1 }))
      expect(again.status).toBe('open')
    })
  })
}
