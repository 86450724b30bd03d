/**
 * FramedRecords: a batch framed chunk by chunk (shared memory, as the
 * signature workers read it), then put together as one log entry per hour,
 * gives the very entries the log codec writes for the same records: checked
 * against entries built independently, record by record, from each record's
 * encoded value (encodeLogEntry, encodeValue), for any cut into chunks.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { FramedRecords } from '../../src/keys/framed-records.js'
import { PERIOD_MS, periodOf } from '../../src/keys/key-layout.js'
import { encodeLogEntry, readLogEntry, type FinishedLogEntry } from '../../src/keys/log-codec.js'
import { encodeValue } from '../../src/keys/value-codec.js'
import type { StoredRecord } from '../../src/records/stored-record.js'
import { validateBatch } from '../../src/records/validate-batch.js'
import { TRICKY_SYMBOLS, inputRecordArb } from '../../src/testing/record-arbitraries.js'
import { TEST_PROVIDER } from '../../src/testing/records.js'

/** Records over a few hours (several entries per batch, records of one hour not always together). */
const batchArb = fc.array(inputRecordArb([...TRICKY_SYMBOLS, 'ETH'], PERIOD_MS / 5), { minLength: 1, maxLength: 40 })
  .map((records) => validateBatch(records, TEST_PROVIDER))

/** Cut points for `length` records: increasing, ending at `length`. */
function cutsArb(length: number): fc.Arbitrary<number[]> {
  return fc.uniqueArray(fc.integer({ min: 1, max: length }), { maxLength: 6 }).map((cuts) => [...new Set([...cuts, length])].sort((a, b) => a - b))
}

/** The entries of `records` by hour, each built by the log codec from the records' encoded values, in batch order. */
function expectedEntries(records: readonly StoredRecord[]): Map<number, Buffer> {
  const byPeriod = new Map<number, StoredRecord[]>()
  for (const record of records) byPeriod.set(periodOf(record.timestamp), [...(byPeriod.get(periodOf(record.timestamp)) ?? []), record])
  return new Map([...byPeriod].map(([period, list]) => [period, encodeLogEntry(list.map((r) => ({ symbol: r.symbol, timestamp: r.timestamp, id: r.id, value: encodeValue(r) })))]))
}

/** Where readLogEntry finds each record, in the places' form. */
function placesRead(bytes: Buffer): { symbols: string[]; numbers: number[] } {
  const symbols: string[] = []
  const numbers: number[] = []
  readLogEntry(bytes, (symbol, timestamp, idStart, idEnd, valueStart, valueEnd) => {
    symbols.push(symbol)
    numbers.push(timestamp, idStart, idEnd, valueStart, valueEnd)
  })
  return { symbols, numbers }
}

function expectEntries(actual: ReadonlyMap<number, FinishedLogEntry>, records: readonly StoredRecord[]): void {
  const expected = expectedEntries(records)
  expect([...actual.keys()].sort()).toEqual([...expected.keys()].sort())
  for (const [period, entry] of actual) {
    expect(Buffer.compare(entry.bytes, expected.get(period) as Buffer)).toBe(0)
    expect({ symbols: [...entry.places.symbols], numbers: [...entry.places.numbers] }).toEqual(placesRead(entry.bytes))
  }
}

describe('FramedRecords', () => {
  it('puts together, from chunks cut anywhere, the log entries the codec writes for the records (property)', () => {
    fc.assert(
      fc.property(batchArb.chain((records) => fc.tuple(fc.constant(records), cutsArb(records.length))), ([records, cuts]) => {
        const framed = new FramedRecords(records)
        let from = 0
        for (const to of cuts) {
          const chunk = framed.share(to)
          expect(chunk.buffer).toBeInstanceOf(SharedArrayBuffer)
          // A chunk is the log entry of its records, in batch order.
          const slice = records.slice(from, to)
          expect(Buffer.compare(chunk, encodeLogEntry(slice.map((r) => ({ symbol: r.symbol, timestamp: r.timestamp, id: r.id, value: encodeValue(r) }))))).toBe(0)
          from = to
        }
        expectEntries(framed.entries(), records)
      }),
      { numRuns: 200 },
    )
  })

  it('encodes the entries in place when nothing was framed (a batch not verified) (property)', () => {
    fc.assert(fc.property(batchArb, (records) => expectEntries(new FramedRecords(records).entries(), records)), { numRuns: 100 })
  })

  it('sizes each entry put together from frames to its bytes (no copy, no unused memory)', () => {
    // Entries of over 4 KB each: smaller buffers may come from Node's shared pool.
    const records = validateBatch(Array.from({ length: 300 }, (_, i) => ({
      id: `r${i}`, symbol: i % 3 === 0 ? 'BTC' : 'ETH', provider: TEST_PROVIDER.id, value: i, signature: Buffer.alloc(96, i).toString('base64'), permawebTx: 'tx',
      version: '0.4', source: { binance: i }, timestamp: PERIOD_MS * 1000 + (i % 2) * PERIOD_MS + i,
    })), TEST_PROVIDER)
    const framed = new FramedRecords(records)
    framed.share(64)
    framed.share(300)
    for (const entry of framed.entries().values()) expect(entry.bytes.buffer.byteLength).toBe(entry.bytes.length)
  })

  it('frames chunks in order only, within the batch', () => {
    const records = validateBatch([{ id: 'a', symbol: 'BTC', provider: TEST_PROVIDER.id, value: 1, signature: 's', permawebTx: '', version: '3', source: {}, timestamp: 1 }], TEST_PROVIDER)
    const framed = new FramedRecords([...records, ...records])
    for (const to of [0, 3, 1.5, Number.NaN]) expect(() => framed.share(to)).toThrow(RangeError)
    framed.share(1)
    expect(() => framed.share(1)).toThrow(RangeError)
    expect(placesRead(framed.share(2)).symbols).toEqual(['BTC'])
  })
})
