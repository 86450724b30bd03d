import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { ByteWriter } from '../../src/keys/bytes.js'
import { encodeLogEntry, readLogEntry } from '../../src/keys/log-codec.js'
import type { LogRecord } from '../../src/keys/log-codec.js'
import { VALUE_VERSION } from '../../src/keys/format-version.js'
import { idArb, symbolArb } from '../../src/testing/record-arbitraries.js'
import { OTHER_VERSIONS, expectMalformed, expectOnlyMalformed, withVersion } from './codec-helpers.js'

interface Read {
  readonly symbol: string
  readonly timestamp: number
  readonly id: string
  readonly value: Buffer
}

function read(bytes: Buffer): Read[] {
  const out: Read[] = []
  readLogEntry(bytes, (symbol, timestamp, idStart, idEnd, valueStart, valueEnd) => {
    out.push({ symbol, timestamp, id: bytes.toString('utf8', idStart, idEnd), value: Buffer.from(bytes.subarray(valueStart, valueEnd)) })
  })
  return out
}

const plain = (r: LogRecord): Read => ({ symbol: r.symbol, timestamp: r.timestamp, id: r.id, value: Buffer.from(r.value) })

const recordArb: fc.Arbitrary<LogRecord> = fc.record({
  symbol: symbolArb,
  timestamp: fc.oneof(fc.constantFrom(0, 2 ** 32, Number.MAX_SAFE_INTEGER), fc.maxSafeNat()),
  id: fc.oneof(idArb, fc.uuid()),
  value: fc.uint8Array({ maxLength: 300 }),
})

describe('log entries', () => {
  it('round-trip any records, in the order written, repeats and mixed symbols included (property)', () => {
    fc.assert(
      fc.property(fc.array(recordArb, { maxLength: 30 }), (records) => {
        const doubled = records.length > 0 ? [...records, records[0] as LogRecord] : records
        expect(read(encodeLogEntry(doubled))).toEqual(doubled.map(plain))
      }),
      { numRuns: 300 },
    )
  })

  it('an entry with no records is the version byte alone', () => {
    const bytes = encodeLogEntry([])
    expect([...bytes]).toEqual([VALUE_VERSION])
    expect(read(bytes)).toEqual([])
  })

  it('has the documented layout: version | (symbol | timestamp u64 BE | id | value)*', () => {
    const record = { symbol: 'BTC', timestamp: 2 ** 32 + 7, id: 'é', value: Buffer.from([1, 2, 3]) }
    const expectedBytes = new ByteWriter().byte(VALUE_VERSION).text('BTC').uint64(2 ** 32 + 7).text('é').sized(Buffer.from([1, 2, 3])).finish()
    expect(encodeLogEntry([record])).toEqual(expectedBytes)
  })

  it('keeps ids as UTF-8 text, UUIDs included (no compact form in the log)', () => {
    const id = '0f8fad5b-d9cb-469f-a165-70867728950e'
    const bytes = encodeLogEntry([{ symbol: 'ETH', timestamp: 1, id, value: Buffer.alloc(0) }])
    expect(bytes.includes(Buffer.from(id, 'utf8'))).toBe(true)
    expect(read(bytes)[0]?.id).toBe(id)
  })

  it('values are views into the entry: the visitor gets offsets, not copies', () => {
    const bytes = encodeLogEntry([{ symbol: 'A', timestamp: 5, id: 'x', value: Buffer.from('value!') }])
    readLogEntry(bytes, (_symbol, _timestamp, idStart, idEnd, valueStart, valueEnd) => {
      expect(bytes.toString('utf8', idStart, idEnd)).toBe('x')
      expect(bytes.toString('utf8', valueStart, valueEnd)).toBe('value!')
      expect(valueEnd).toBe(bytes.length)
    })
  })

  it('a version other than 3, an empty entry, or a cut inside a record is MalformedBytes', () => {
    const records = [
      { symbol: 'BTC', timestamp: 1_700_000_000_000, id: 'a', value: Buffer.from('one') },
      { symbol: 'BTC-USD', timestamp: 1_700_000_000_001, id: 'bb', value: Buffer.from('two') },
    ]
    const good = encodeLogEntry(records)
    for (const version of OTHER_VERSIONS) expectMalformed(() => read(withVersion(good, version)), `version ${version}`)
    expectMalformed(() => read(Buffer.alloc(0)), 'empty')
    // An entry holds no record count: a cut exactly between records reads as the records before it.
    const boundary = encodeLogEntry(records.slice(0, 1)).length
    for (let cut = 1; cut < good.length; cut++) {
      if (cut === 1) expect(read(good.subarray(0, cut))).toEqual([])
      else if (cut === boundary) expect(read(good.subarray(0, cut))).toEqual([plain(records[0] as LogRecord)])
      else expectMalformed(() => read(good.subarray(0, cut)), `cut at ${cut}`)
    }
  })

  it('random bytes after the version: records or MalformedBytes, never another error (property)', () => {
    const bytes = fc.uint8Array({ maxLength: 60 }).map((tail) => Buffer.concat([Buffer.from([VALUE_VERSION]), tail]))
    expectOnlyMalformed(bytes, read, 500)
  })
})
