/**
 * Format 7's verdicts (one entry per record, sublevel `v`) moving into
 * verdict groups (sublevel `w`) as a store opens: every verdict arrives,
 * each write ends with a group, a write that fails leaves every verdict in
 * exactly one of the two sublevels and the next move carries on, and a key
 * that does not parse is a coded error that moves nothing.
 */
import { MemoryLevel } from 'memory-level'
import { describe, expect, it, vi } from 'vitest'
import { PERIOD_MS, readVerdictGroupKey } from '../../src/keys/key-layout.js'
import { writeUint64 } from '../../src/keys/bytes.js'
import { decodeVerdict, encodeVerdict } from '../../src/keys/verdict-codec.js'
import type { BytesSublevel } from '../../src/store/db/sublevels.js'
import { prefixOf } from '../../src/store/db/root-batch.js'
import { moveRecordVerdicts } from '../../src/store/lifecycle/verdict-migration.js'
import type { ReadView } from '../../src/store/read/read-view.js'
import { VerdictIndex } from '../../src/store/signatures/verdict-index.js'
import { SIGNATURE_COVERS, type RecordVerdict } from '../../src/trust/verdict.js'
import { PriceStore } from '../../src/index.js'
import { TEST_PROVIDER } from '../../src/testing/records.js'

const PROVIDER = { name: 'redstone', id: 'provider-address', publicKey: 'key' }
const START = 470_000 * PERIOD_MS
const VALID: RecordVerdict = { overall: 'valid', checks: [{ kind: 'arweave', result: 'valid', covers: SIGNATURE_COVERS.arweave, signer: PROVIDER.id }] }
const INVALID: RecordVerdict = {
  overall: 'invalid', checks: [{ kind: 'arweave', result: 'invalid', covers: SIGNATURE_COVERS.arweave, signer: PROVIDER.id, reason: 'does not verify' }],
}

/** A format 7 verdict key: symbol · 0x00 · timestamp (u64 BE) · id. */
function recordVerdictKey(symbol: string, timestamp: number, id: string): Buffer {
  const key = Buffer.alloc(Buffer.byteLength(symbol) + 9 + Buffer.byteLength(id))
  key.write(symbol, 0)
  writeUint64(key, Buffer.byteLength(symbol) + 1, timestamp)
  key.write(id, Buffer.byteLength(symbol) + 9)
  return key
}

/** What format 7 held: 3 symbols over 3 hours, several records a symbol and hour, two kinds of verdict. */
const LEGACY = ['BTC', 'BTC-USD', 'ETH'].flatMap((symbol) => Array.from({ length: 14 }, (_, i) => ({
  symbol, timestamp: START + Math.floor(i / 5) * PERIOD_MS + (i % 5) * 1000, id: `${symbol}-${i}`, verdict: i % 4 === 0 ? INVALID : VALID,
})))

async function setUp(): Promise<{ db: MemoryLevel<any, any>; from: BytesSublevel; to: BytesSublevel }> {
  const db = new MemoryLevel<any, any>()
  const from = db.sublevel<Uint8Array, Uint8Array>('v', { keyEncoding: 'view', valueEncoding: 'view' }) as unknown as BytesSublevel
  const to = db.sublevel<Uint8Array, Uint8Array>('w', { keyEncoding: 'view', valueEncoding: 'view' }) as unknown as BytesSublevel
  await db.open()
  for (const { symbol, timestamp, id, verdict } of LEGACY) await from.put(recordVerdictKey(symbol, timestamp, id), encodeVerdict(verdict, PROVIDER.id))
  return { db, from, to }
}

/** Every verdict the groups hold, by record, as the store reads them. */
async function grouped(to: BytesSublevel): Promise<Map<string, RecordVerdict>> {
  const index = new VerdictIndex(to, prefixOf(to), PROVIDER)
  await index.load()
  const view = { entries: (level: BytesSublevel, range: object) => level.iterator(range) } as unknown as ReadView
  const found = new Map<string, RecordVerdict>()
  for (const symbol of ['BTC', 'BTC-USD', 'ETH']) {
    for await (const page of index.read(view, symbol, 0, Number.MAX_SAFE_INTEGER)) for (const kept of page) found.set(`${symbol}|${kept.timestamp}|${kept.id}`, kept.verdict)
  }
  return found
}

/** Every verdict format 7's sublevel still holds, by record. */
async function ungrouped(from: BytesSublevel): Promise<Map<string, RecordVerdict>> {
  const found = new Map<string, RecordVerdict>()
  for (const [key, value] of await from.iterator().all()) {
    const bytes = Buffer.from(key)
    const symbol = bytes.toString('utf8', 0, bytes.indexOf(0))
    found.set(`${symbol}|${bytes.readBigUInt64BE(symbol.length + 1)}|${bytes.toString('utf8', symbol.length + 9)}`, decodeVerdict(value, PROVIDER.id))
  }
  return found
}

const expected = new Map(LEGACY.map(({ symbol, timestamp, id, verdict }) => [`${symbol}|${timestamp}|${id}`, decodeVerdict(encodeVerdict(verdict, PROVIDER.id), PROVIDER.id)]))

describe('moving format 7 verdicts into groups', () => {
  it('moves every verdict, at position 0, in writes that each end with a group; format 7\'s sublevel is left empty', async () => {
    const { db, from, to } = await setUp()
    const batches = vi.spyOn(db, 'batch')
    expect(await moveRecordVerdicts({ db: db as never, from, to, sync: false }, 4)).toBe(LEGACY.length)
    expect(await from.keys().all()).toEqual([])
    expect(await grouped(to)).toEqual(expected)
    // 3 symbols × 3 hours (5, 5 and 4 records): one group each, none written twice, all at position 0.
    const keys = (await to.keys().all()).map((key) => Buffer.from(key).toString('hex'))
    expect(keys).toHaveLength(9)
    for (const key of await to.keys().all()) expect(readVerdictGroupKey(key).position).toBe(0)
    // A write takes whole groups until it holds 4 verdicts or more: here one group (4 or 5 records) a write.
    expect(batches).toHaveBeenCalledTimes(9)
    expect(await moveRecordVerdicts({ db: db as never, from, to, sync: false }, 4)).toBe(0)
    await db.close()
  })

  it('after a write that fails, every verdict is in exactly one of the two sublevels, and moving again finishes', async () => {
    const { db, from, to } = await setUp()
    const batch = db.batch.bind(db)
    let writes = 0
    const spy = vi.spyOn(db, 'batch').mockImplementation(((...args: Parameters<typeof db.batch>) => {
      if (++writes === 3) return Promise.reject(new Error('disk full'))
      return batch(...args)
    }) as never)
    await expect(moveRecordVerdicts({ db: db as never, from, to, sync: false }, 12)).rejects.toMatchObject({ code: 'PRICE_STORAGE_ERROR' })
    spy.mockRestore()
    const moved = await grouped(to)
    const left = await ungrouped(from)
    expect(moved.size).toBeGreaterThan(0)
    expect(left.size).toBeGreaterThan(0)
    expect(moved.size + left.size).toBe(LEGACY.length)
    expect(new Map([...moved, ...left])).toEqual(expected)
    expect(await moveRecordVerdicts({ db: db as never, from, to, sync: false }, 12)).toBe(left.size)
    expect(await grouped(to)).toEqual(expected)
    expect(await from.keys().all()).toEqual([])
    await db.close()
  })

  it('refuses a key that does not parse with PRICE_CORRUPT_VALUE, naming it, and moves nothing', async () => {
    const { db, from, to } = await setUp()
    await from.put(Buffer.from('AAA'), encodeVerdict(VALID, PROVIDER.id))
    await expect(moveRecordVerdicts({ db: db as never, from, to, sync: false })).rejects.toMatchObject({
      code: 'PRICE_CORRUPT_VALUE', message: expect.stringContaining('0x414141'),
    })
    expect(await to.keys().all()).toEqual([])
    expect(await from.keys().all()).toHaveLength(LEGACY.length + 1)
    await db.close()
  })

  it('runs as a format 7 store opens, after its format key says 8: a move that fails is taken up by the next open', async () => {
    const { db, from, to } = await setUp()
    const meta = db.sublevel<string, string>('m', { keyEncoding: 'utf8', valueEncoding: 'utf8' })
    await meta.put('format', '7')
    await meta.put('provider', JSON.stringify(TEST_PROVIDER))
    // A damaged key after every good one: the move stops before its one write, the store does not open.
    const damaged = Buffer.from('ZZZ')
    await from.put(damaged, encodeVerdict(VALID, PROVIDER.id))
    await expect(PriceStore.open(db, { provider: TEST_PROVIDER })).rejects.toMatchObject({ code: 'PRICE_CORRUPT_VALUE' })
    await db.open()
    await Promise.all([meta.open(), from.open(), to.open()])
    // Already format 8, so a release that reads only format 7 keeps out while the verdicts are in both places.
    expect(await meta.get('format')).toBe('8')
    expect(await to.keys().all()).toEqual([])
    await from.del(damaged)
    const store = await PriceStore.open(db, { provider: TEST_PROVIDER })
    await store.close()
    await db.open()
    await Promise.all([from.open(), to.open()])
    expect(await from.keys().all()).toEqual([])
    expect(await grouped(to)).toEqual(expected)
    await db.close()
  })
})
