/**
 * Journal entries and keys: a round trip keeps the keys in batch order
 * (repeats included) and the commit id, `end` counts the bytes of every entry so far, keys
 * sort by position, and damaged bytes are refused; a damaged journal in a
 * store gives PRICE_CORRUPT_VALUE naming the entry.
 */
import { MemoryLevel } from 'memory-level'
import { describe, expect, it } from 'vitest'
import { PriceStore } from '../../src/index.js'
import { MalformedBytes } from '../../src/keys/bytes.js'
import { encodeJournalEntry, readJournalCommitId, readJournalEnd, readJournalEntry } from '../../src/keys/journal-codec.js'
import { journalKey, readJournalKey } from '../../src/keys/key-layout.js'
import { TEST_PROVIDER as PROVIDER, T0 } from '../../src/testing/records.js'
import { rejectsCode, throwsCode } from '../support/assertions.js'
import { rec } from '../support/records.js'

const RECORDS = [
  { symbol: 'BTC', timestamp: T0, id: 'a' },
  { symbol: 'Ω€', timestamp: 0, id: '\u{1F600}' },
  { symbol: 'BTC', timestamp: Number.MAX_SAFE_INTEGER, id: 'a' },
  { symbol: 'BTC', timestamp: T0, id: 'a' },
]

describe('journal codec', () => {
  it('round-trips the keys in order, repeats included, and counts bytes in end', () => {
    const first = encodeJournalEntry(RECORDS, undefined, 0)
    expect(readJournalEntry(first)).toEqual(RECORDS)
    expect(readJournalCommitId(first)).toBeUndefined()
    expect(readJournalEnd(first)).toBe(first.length)
    const second = encodeJournalEntry(RECORDS.slice(1, 2), undefined, readJournalEnd(first))
    expect(readJournalEnd(second)).toBe(first.length + second.length)
  })

  it('round-trips the commit id beside the keys: version, end, the id as a varint length and UTF-8', () => {
    for (const id of ['a', 'node-1:42', 'é\u{1F600}', 'x'.repeat(256)]) {
      const entry = encodeJournalEntry(RECORDS, id, 7)
      expect(readJournalCommitId(entry)).toBe(id)
      expect(readJournalEntry(entry)).toEqual(RECORDS)
      expect(readJournalEnd(entry)).toBe(7 + entry.length)
    }
    const entry = encodeJournalEntry([], 'ab')
    expect([...entry]).toEqual([3, ...Array(7).fill(0), entry.length, 2, 0x61, 0x62, 0])
  })

  it('refuses damaged entries', () => {
    const entry = encodeJournalEntry(RECORDS, 'id', 0)
    expect(() => readJournalEntry(entry.subarray(0, entry.length - 1))).toThrow(MalformedBytes)
    expect(() => readJournalCommitId(entry.subarray(0, 1 + 8 + 2))).toThrow(MalformedBytes)
    expect(() => readJournalEnd(entry.subarray(0, 5))).toThrow(MalformedBytes)
    const otherVersion = Buffer.from(entry)
    otherVersion[0] = 99
    expect(() => readJournalEntry(otherVersion)).toThrow(MalformedBytes)
    const badIndex = encodeJournalEntry([{ symbol: 'A', timestamp: 1, id: 'x' }], undefined, 0)
    // The record's symbol index (after version, end, an empty commit id, one symbol "A") points past the table.
    badIndex[1 + 8 + 1 + 1 + 2] = 5
    expect(() => readJournalEntry(badIndex)).toThrow(MalformedBytes)
  })

  it('keys sort by position and read back', () => {
    const positions = [0, 1, 255, 256, 2 ** 32, Number.MAX_SAFE_INTEGER]
    for (const position of positions) expect(readJournalKey(journalKey(position))).toBe(position)
    const sorted = positions.map(journalKey).sort(Buffer.compare).map(readJournalKey)
    expect(sorted).toEqual(positions)
    expect(() => readJournalKey(Buffer.alloc(7))).toThrow(MalformedBytes)
  })
})

describe('a damaged journal in a store', () => {
  const journal = (db: MemoryLevel<any, any>) => db.sublevel<Uint8Array, Uint8Array>('j', { keyEncoding: 'view', valueEncoding: 'view' })

  it('a damaged newest entry stops the store from opening (the position would go back)', async () => {
    const db = new MemoryLevel()
    const store = await PriceStore.open(db, { provider: PROVIDER })
    await store.putMany([rec({ timestamp: T0 })])
    await store.close()
    await db.open()
    await journal(db).put(journalKey(1), Buffer.from([1, 2, 3]))
    await db.close()
    const err = await rejectsCode(PriceStore.open(db, { provider: PROVIDER }), 'PRICE_CORRUPT_VALUE')
    expect(err.details.key).toBe('journal entry 1')
  })

  it('a damaged entry in the middle fails the replay that reads it, naming it', async () => {
    const db = new MemoryLevel()
    const store = await PriceStore.open(db, { provider: PROVIDER })
    for (let i = 0; i < 3; i++) await store.putMany([rec({ timestamp: T0 + i })])
    await journal(db).put(journalKey(2), Buffer.from([3, 0]))
    const watch = store.watch({ after: 0 })
    expect((await watch.next()).value).toMatchObject({ type: 'records', position: 1 })
    const err = await rejectsCode(watch.next(), 'PRICE_CORRUPT_VALUE')
    expect(err.details.key).toBe('journal entry 2')
    expect(await watch.next()).toEqual({ done: true, value: undefined })
    await store.close()
  })

  it('journal options are checked', () => {
    for (const journalOption of [null, 5, { commits: 0 }, { commits: 1.5 }, { bytes: -1 }, { bytes: '1' }]) {
      throwsCode(() => new PriceStore(new MemoryLevel(), { provider: PROVIDER, journal: journalOption as never }), 'PRICE_INVALID_OPTIONS')
    }
  })
})
