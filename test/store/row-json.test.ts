/**
 * `Row.json` writes a stored record's JSON straight from its value bytes
 * (src/keys/value-codec.ts `valueJson`), for streamed answers. It must be
 * the very text the answers write for the decoded record: `toExactJson` of
 * `record()`, or of `sampled()` with `minutes`, whatever the record holds.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { toExactJson } from '../../src/rules/exact-json.js'
import { encodeValue } from '../../src/keys/value-codec.js'
import { validateRecord } from '../../src/records/validate-record.js'
import { Row } from '../../src/store/rows/row.js'
import { inputRecordArb, symbolArb } from '../../src/testing/record-arbitraries.js'
import { TEST_PROVIDER } from '../../src/testing/records.js'

/** A row over an encoded value, as the store builds them: the id beside the value, in one buffer. */
function rowOf(input: Record<string, unknown>): Row {
  const record = validateRecord(input, 0, TEST_PROVIDER)
  const id = Buffer.from(record.id, 'utf8')
  const value = encodeValue(record)
  const bytes = Buffer.concat([Buffer.from([7, 7]), id, value, Buffer.from([9])])
  return new Row(record.symbol, record.timestamp, bytes, 2, 2 + id.length, 2 + id.length, 2 + id.length + value.length, 'test entry', TEST_PROVIDER)
}

const inputs = fc.uniqueArray(symbolArb, { minLength: 1, maxLength: 3 }).chain((symbols) => inputRecordArb(symbols, 3_600_000))

describe('Row.json', () => {
  it('is the JSON of the decoded record, with and without minutes, before or after decoding (property)', () => {
    fc.assert(
      fc.property(inputs, fc.boolean(), (input, minutes) => {
        const fresh = rowOf(input).json(minutes)
        const decoded = rowOf(input)
        const expected = toExactJson(minutes ? decoded.sampled() : decoded.record())
        expect(fresh).toBe(expected)
        expect(decoded.json(minutes)).toBe(expected)
        expect(JSON.parse(fresh)).toEqual(JSON.parse(expected))
      }),
      { numRuns: 500 },
    )
  })

  it('keeps a -0 price, a -0 inside source, extra fields, escapes and index-like keys, as the decoded record does', () => {
    for (const input of [
      { value: -0, source: { a: 1 } },
      { source: { a: -0, b: [1, -0] } },
      { evmSignature: '0xabc', '7': 'an array-index key' },
      { signature: 'not base64 "quoted" \\ \n', permawebTx: 'ü\u2028', version: '' },
      { source: { '10': 1, '2': 2, x: { y: null } } },
    ]) {
      const base = { id: 'id-1', symbol: 'BTC', provider: TEST_PROVIDER.id, value: 1.5, signature: 'c2ln', permawebTx: 'tx', version: '0.4', source: {}, timestamp: 1_700_000_012_345 }
      const row = rowOf({ ...base, ...input })
      for (const minutes of [false, true]) expect(row.json(minutes)).toBe(toExactJson(minutes ? rowOf({ ...base, ...input }).sampled() : rowOf({ ...base, ...input }).record()))
    }
  })
})
