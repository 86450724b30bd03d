/**
 * The verdicts sublevel in groups against a model that keeps one
 * verdict per record: any sequence of verified and unverified writes (the
 * same record written again in later commits and within one), prunes of any
 * time range, and reopening, then reads of any range. A record's verdict is
 * the latest commit's; a record written without verification has none; a
 * pruned one has none and leaves nothing on the disk. An unverified write
 * names only records that may have a verdict (of a symbol and hour up to its
 * latest with a group), after reopening too.
 */
import fc from 'fast-check'
import { MemoryLevel } from 'memory-level'
import { describe, expect, it } from 'vitest'
import { PERIOD_MS } from '../../src/keys/key-layout.js'
import { decodeVerdict, encodeVerdict } from '../../src/keys/verdict-codec.js'
import type { StoredRecord } from '../../src/records/stored-record.js'
import { RootBatch, prefixOf } from '../../src/store/db/root-batch.js'
import type { BytesSublevel } from '../../src/store/db/sublevels.js'
import type { ReadView } from '../../src/store/read/read-view.js'
import { VerdictIndex } from '../../src/store/signatures/verdict-index.js'
import { SIGNATURE_COVERS, type RecordVerdict } from '../../src/trust/verdict.js'

const PROVIDER = { name: 'redstone', id: 'provider-address', publicKey: 'key' }
const START = 470_000 * PERIOD_MS
const VERDICTS: readonly RecordVerdict[] = [
  { overall: 'valid', checks: [{ kind: 'arweave', result: 'valid', covers: SIGNATURE_COVERS.arweave, signer: PROVIDER.id }] },
  { overall: 'invalid', checks: [{ kind: 'arweave', result: 'invalid', covers: SIGNATURE_COVERS.arweave, signer: PROVIDER.id, reason: 'does not verify' }] },
  {
    overall: 'signer-not-allowed',
    checks: [{ kind: 'lite-evm', result: 'signer-not-allowed', covers: SIGNATURE_COVERS['lite-evm'], signer: `0x${'ab'.repeat(20)}`, reason: 'not allowed' }],
  },
]

type Step =
  | { readonly type: 'write'; readonly verified: boolean; readonly records: readonly { symbol: string; timestamp: number; id: string; verdict: number }[] }
  | { readonly type: 'prune'; readonly symbol: string; readonly from: number; readonly to: number }
  | { readonly type: 'reopen' }

const SYMBOLS = ['BTC', 'BTC-USD', 'ETH']
/** Times over three hours, bunched so that records and prune bounds meet at the hours' edges. */
const times = fc.oneof(
  fc.integer({ min: 0, max: 3 * PERIOD_MS - 1 }),
  fc.constantFrom(0, 1, PERIOD_MS - 1, PERIOD_MS, PERIOD_MS + 1, 2 * PERIOD_MS - 1, 2 * PERIOD_MS),
).map((offset) => START + offset)
const steps: fc.Arbitrary<Step> = fc.oneof(
  { weight: 5, arbitrary: fc.record({
    type: fc.constant('write' as const),
    verified: fc.boolean(),
    records: fc.array(fc.record({
      symbol: fc.constantFrom(...SYMBOLS), timestamp: times, id: fc.constantFrom('a', 'b', 'ü'), verdict: fc.nat(VERDICTS.length - 1),
    }), { minLength: 1, maxLength: 12 }),
  }) },
  { weight: 2, arbitrary: fc.record({ type: fc.constant('prune' as const), symbol: fc.constantFrom(...SYMBOLS), from: times, to: times }) },
  { weight: 1, arbitrary: fc.constant({ type: 'reopen' as const }) },
)

/** A stored record as far as verdicts care: its key. */
function stored(record: { symbol: string; timestamp: number; id: string }): StoredRecord {
  return { ...record, value: 1, signature: '', permawebTx: '', version: '', source: {}, extras: null }
}

/** A read view over the sublevel itself: the index reads only its entries. */
function viewOf(): ReadView {
  return { entries: (level: BytesSublevel, range: object) => level.iterator(range) } as unknown as ReadView
}

/** An index over a new database's sublevel `w`, loaded. */
async function openIndex(): Promise<{ db: MemoryLevel<any, any>; level: BytesSublevel; index: VerdictIndex }> {
  const db = new MemoryLevel<any, any>()
  const level = db.sublevel<Uint8Array, Uint8Array>('w', { keyEncoding: 'view', valueEncoding: 'view' }) as unknown as BytesSublevel
  await db.open()
  const index = new VerdictIndex(level, prefixOf(level), PROVIDER)
  await index.load()
  return { db, level, index }
}

/** A verdict as the index returns it: through its bytes. */
function asKept(verdict: RecordVerdict): RecordVerdict {
  return decodeVerdict(encodeVerdict(verdict, PROVIDER.id), PROVIDER.id)
}

describe('the verdict index', () => {
  it('answers every read as a model with one verdict per record would, after any writes, prunes and reopenings', async () => {
    await fc.assert(fc.asyncProperty(fc.array(steps, { maxLength: 14 }), times, times, async (plan, a, b) => {
      const opened = await openIndex()
      const { db, level } = opened
      let { index } = opened
      const model = new Map<string, { symbol: string; timestamp: number; id: string; verdict: number }>()
      let position = 0
      for (const step of plan) {
        if (step.type === 'reopen') {
          index = new VerdictIndex(level, prefixOf(level), PROVIDER)
          await index.load()
        } else if (step.type === 'write') {
          const batch = new RootBatch()
          const verdicts = step.verified ? step.records.map((record) => VERDICTS[record.verdict] as RecordVerdict) : undefined
          index.stage(batch, step.records.map(stored), verdicts, ++position)
          await batch.write(db, false)
          for (const record of step.records) {
            const key = `${record.symbol}|${record.timestamp}|${record.id}`
            if (step.verified) model.set(key, record)
            else model.delete(key)
          }
        } else {
          const batch = new RootBatch()
          const [from, to] = [Math.min(step.from, step.to), Math.max(step.from, step.to)]
          await index.stageDeletes(batch, step.symbol, from, to)
          await batch.write(db, false)
          for (const [key, record] of model) if (record.symbol === step.symbol && record.timestamp >= from && record.timestamp <= to) model.delete(key)
        }
      }
      const [from, to] = [Math.min(a, b), Math.max(a, b)]
      for (const symbol of SYMBOLS) {
        const read: { timestamp: number; id: string; verdict: RecordVerdict }[] = []
        let last = -Infinity
        for await (const page of index.read(viewOf(), symbol, from, to)) {
          expect(page.length).toBeGreaterThan(0)
          for (const kept of page) {
            expect(kept.timestamp).toBeGreaterThanOrEqual(last)
            last = kept.timestamp
            read.push({ timestamp: kept.timestamp, id: kept.id, verdict: kept.verdict })
          }
        }
        const expected = [...model.values()]
          .filter((record) => record.symbol === symbol && record.timestamp >= from && record.timestamp <= to)
          .map((record) => ({ timestamp: record.timestamp, id: record.id, verdict: asKept(VERDICTS[record.verdict] as RecordVerdict) }))
        const order = (x: { timestamp: number; id: string }, y: { timestamp: number; id: string }): number => x.timestamp - y.timestamp || (x.id < y.id ? -1 : x.id > y.id ? 1 : 0)
        expect(read.sort(order)).toEqual(expected.sort(order))
      }
      // A prune of everything leaves no group behind.
      for (const symbol of SYMBOLS) {
        const batch = new RootBatch()
        await index.stageDeletes(batch, symbol, 0, Number.MAX_SAFE_INTEGER)
        await batch.write(db, false)
      }
      expect(await level.keys().all()).toEqual([])
      await db.close()
    }), { numRuns: 150 })
  })

  it('writes one entry per symbol and hour a batch touches, however many records it has', async () => {
    const { db, index } = await openIndex()
    const records = Array.from({ length: 3000 }, (_, i) => stored({ symbol: SYMBOLS[i % 3] as string, timestamp: START + i * 2400, id: `r${i}` }))
    const batch = new RootBatch()
    index.stage(batch, records, records.map(() => VERDICTS[0] as RecordVerdict), 1)
    // 3,000 records 2.4 s apart from an hour's start fill two hours: three symbols in each.
    expect(batch.length).toBe(3 * 2)
    await batch.write(db, false)
    let count = 0
    for await (const page of index.read(viewOf(), 'ETH', 0, Number.MAX_SAFE_INTEGER)) count += page.length
    expect(count).toBe(1000)
    await db.close()
  })

  it('names with no verdict only the records that may have one: of a symbol and hour up to its latest with a group', async () => {
    const { db, level, index } = await openIndex()
    // Verified records in the second hour, then (a later commit, the index not reloaded) in the third.
    for (const [position, offset] of [[1, PERIOD_MS], [2, 2 * PERIOD_MS]] as const) {
      const verified = new RootBatch()
      index.stage(verified, [stored({ symbol: 'BTC', timestamp: START + offset, id: 'a' })], [VERDICTS[0] as RecordVerdict], position)
      await verified.write(db, false)
    }
    const reopened = new VerdictIndex(level, prefixOf(level), PROVIDER)
    await reopened.load()
    for (const reader of [index, reopened]) {
      const unverified = (symbol: string, offset: number): number => {
        const batch = new RootBatch()
        reader.stage(batch, [stored({ symbol, timestamp: START + offset, id: 'b' })], undefined, 3)
        return batch.length
      }
      // The hours with a group and the hour before them: a group naming the record with none.
      expect([unverified('BTC', 2 * PERIOD_MS), unverified('BTC', PERIOD_MS), unverified('BTC', 0)]).toEqual([1, 1, 1])
      // A later hour, and symbols without a group (one whose key starts with BTC's): nothing to undo.
      expect([unverified('BTC', 3 * PERIOD_MS), unverified('BTC-USD', PERIOD_MS), unverified('ETH', 0)]).toEqual([0, 0, 0])
    }
    await db.close()
  })

  it('refuses a damaged key as it loads, and gets past any symbol bytes', async () => {
    const { db, level, index } = await openIndex()
    // A symbol that is not UTF-8 (read back as U+FFFD, whose bytes sort elsewhere), then a key with no separator.
    const odd = Buffer.concat([Buffer.of(0xff), Buffer.of(0), Buffer.alloc(12)])
    await level.put(odd, Buffer.of(1))
    await index.load()
    const batch = new RootBatch()
    index.stage(batch, [stored({ symbol: 'BTC', timestamp: START, id: 'a' })], undefined, 1)
    expect(batch.length).toBe(0)
    await level.put(Buffer.concat([Buffer.from('BTC'), Buffer.of(7), Buffer.alloc(12)]), Buffer.of(1))
    await expect(index.load()).rejects.toMatchObject({ code: 'PRICE_CORRUPT_VALUE' })
    await db.close()
  })

  it('writes nothing for an unverified batch while the store holds no verdict', async () => {
    const { db, index } = await openIndex()
    const batch = new RootBatch()
    index.stage(batch, [stored({ symbol: 'BTC', timestamp: START, id: 'a' })], undefined, 1)
    expect(batch.length).toBe(0)
    await db.close()
  })
})
