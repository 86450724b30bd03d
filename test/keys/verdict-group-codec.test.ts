/**
 * Verdict groups: the bytes of one commit's verdicts for a
 * symbol's records of one hour, and their keys. Round trips for any group,
 * every malformed shape refused, and a group's records filtered as a prune
 * needs, checked against filtering the arrays by hand.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { MalformedBytes } from '../../src/keys/bytes.js'
import { PERIOD_MS, readVerdictGroupKey, verdictGroupKey, verdictGroupRange } from '../../src/keys/key-layout.js'
import { encodeVerdict } from '../../src/keys/verdict-codec.js'
import { decodeVerdictGroup, encodeVerdictGroup, withoutRecords, type VerdictGroup } from '../../src/keys/verdict-group-codec.js'

const PERIOD = 472_222
const START = PERIOD * PERIOD_MS

/** Any group of `period`: verdict bytes of any shape (the codec carries them as they are), picks naming them or none. */
const groups = fc.array(fc.uint8Array({ minLength: 1, maxLength: 40 }), { maxLength: 5 }).chain((verdicts) =>
  fc.array(fc.record({
    offset: fc.integer({ min: 0, max: PERIOD_MS - 1 }),
    id: fc.string({ unit: 'grapheme', maxLength: 30 }),
    pick: fc.integer({ min: 0, max: verdicts.length }),
  }), { maxLength: 60 }).map((records): VerdictGroup => ({
    verdicts,
    timestamps: records.map((record) => START + record.offset),
    ids: records.map((record) => record.id),
    picks: records.map((record) => record.pick),
  })))

function plain(group: VerdictGroup): unknown {
  return { ...group, verdicts: group.verdicts.map((bytes) => Buffer.from(bytes).toString('hex')) }
}

describe('a verdict group', () => {
  it('decodes to what was encoded, for any verdicts, ids and picks', () => {
    fc.assert(fc.property(groups, (group) => {
      expect(plain(decodeVerdictGroup(encodeVerdictGroup(group, PERIOD), PERIOD))).toEqual(plain(group))
    }))
  })

  it('holds a valid Arweave verdict once, however many records it has: at most 6 bytes per record beyond the id', () => {
    const verdict = encodeVerdict({ overall: 'valid', checks: [{ kind: 'arweave', result: 'valid', covers: [], signer: 'P' }] }, 'P')
    const ids = Array.from({ length: 1000 }, (_, i) => `id-${i}`)
    const bytes = encodeVerdictGroup({ verdicts: [verdict], timestamps: ids.map((_, i) => START + i * 3600), ids, picks: ids.map(() => 1) }, PERIOD)
    const idBytes = ids.reduce((sum, id) => sum + id.length, 0)
    // Per record: its offset in the hour (a varint of at most 4 bytes below 3,600,000), the id's length, its pick.
    expect(bytes.length - idBytes).toBeLessThanOrEqual(10 + 1000 * (4 + 1 + 1))
  })

  it('refuses to encode a record outside its period or a pick naming no verdict', () => {
    const one = (timestamp: number, pick: number): VerdictGroup => ({ verdicts: [Uint8Array.of(1)], timestamps: [timestamp], ids: ['a'], picks: [pick] })
    expect(() => encodeVerdictGroup(one(START - 1, 1), PERIOD)).toThrow(RangeError)
    expect(() => encodeVerdictGroup(one(START + PERIOD_MS, 1), PERIOD)).toThrow(RangeError)
    expect(() => encodeVerdictGroup(one(START, 2), PERIOD)).toThrow(RangeError)
    expect(() => encodeVerdictGroup(one(START, 1), PERIOD)).not.toThrow()
  })

  it('refuses bytes that do not parse: another version, cut short, bytes after, an offset past the hour, a pick past the verdicts', () => {
    const group: VerdictGroup = { verdicts: [Uint8Array.of(1, 1, 0, 0, 1)], timestamps: [START + 5], ids: ['BTC-1'], picks: [1] }
    const bytes = encodeVerdictGroup(group, PERIOD)
    const cases: Buffer[] = [
      Buffer.concat([Buffer.of(2), bytes.subarray(1)]),
      bytes.subarray(0, bytes.length - 1),
      Buffer.concat([bytes, Buffer.of(0)]),
      // version · no verdicts · one record 3,600,000 ms in (varint 0x80 0xee 0xdb 0x01) · id "" · pick 0
      Buffer.of(1, 0, 1, 0x80, 0xee, 0xdb, 0x01, 0, 0),
      // version · no verdicts · one record · id "" · pick 1
      Buffer.of(1, 0, 1, 0, 0, 1),
    ]
    for (const bad of cases) expect(() => decodeVerdictGroup(bad, PERIOD)).toThrow(MalformedBytes)
    expect(decodeVerdictGroup(Buffer.of(1, 0, 1, 0, 0, 0), PERIOD)).toEqual({ verdicts: [], timestamps: [START], ids: [''], picks: [0] })
  })

  it('without some records keeps the others in order, with their verdicts, and drops the verdicts nobody picks', () => {
    fc.assert(fc.property(groups, fc.integer({ min: 0, max: PERIOD_MS }), fc.integer({ min: 0, max: PERIOD_MS }), (group, a, b) => {
      const [lo, hi] = [START + Math.min(a, b), START + Math.max(a, b)]
      const drop = (timestamp: number): boolean => timestamp >= lo && timestamp <= hi
      const kept = withoutRecords(group, drop)
      // What each kept record's verdict is, against the same walk over the original arrays.
      const expected = group.timestamps.flatMap((timestamp, i) => drop(timestamp) ? [] : [{
        timestamp, id: group.ids[i], verdict: group.picks[i] === 0 ? undefined : Buffer.from(group.verdicts[(group.picks[i] as number) - 1] as Uint8Array).toString('hex'),
      }])
      const actual = kept.timestamps.map((timestamp, i) => ({
        timestamp, id: kept.ids[i], verdict: kept.picks[i] === 0 ? undefined : Buffer.from(kept.verdicts[(kept.picks[i] as number) - 1] as Uint8Array).toString('hex'),
      }))
      expect(actual).toEqual(expected)
      expect(new Set(kept.picks.filter((pick) => pick > 0)).size).toBe(kept.verdicts.length)
      expect(plain(decodeVerdictGroup(encodeVerdictGroup(kept, PERIOD), PERIOD))).toEqual(plain(kept))
    }))
  })
})

describe('verdict group keys', () => {
  it('read back their period and position, and sort by symbol, then period, then position', () => {
    const key = verdictGroupKey('BTC', PERIOD, 2 ** 40 + 3)
    expect(readVerdictGroupKey(key)).toEqual({ period: PERIOD, position: 2 ** 40 + 3 })
    const ordered = [verdictGroupKey('BTC', PERIOD, 7), verdictGroupKey('BTC', PERIOD, 300), verdictGroupKey('BTC', PERIOD + 1, 0), verdictGroupKey('BTC-USD', 0, 0)]
    expect([...ordered].sort(Buffer.compare)).toEqual(ordered)
    expect(() => readVerdictGroupKey(Buffer.alloc(13))).toThrow(MalformedBytes)
  })

  it('range over the periods holding from..to, both ends included, and no other symbol', () => {
    const { gte, lt } = verdictGroupRange('BTC', START + 10, START + 2 * PERIOD_MS)
    const inside = (key: Buffer): boolean => Buffer.compare(key, gte) >= 0 && Buffer.compare(key, lt) < 0
    expect(inside(verdictGroupKey('BTC', PERIOD, 0))).toBe(true)
    expect(inside(verdictGroupKey('BTC', PERIOD + 2, Number.MAX_SAFE_INTEGER))).toBe(true)
    expect(inside(verdictGroupKey('BTC', PERIOD - 1, Number.MAX_SAFE_INTEGER))).toBe(false)
    expect(inside(verdictGroupKey('BTC', PERIOD + 3, 0))).toBe(false)
    expect(inside(verdictGroupKey('BTC-USD', PERIOD, 0))).toBe(false)
    const all = verdictGroupRange('BTC', 0, Number.MAX_SAFE_INTEGER)
    expect(Buffer.compare(verdictGroupKey('BTC', Math.floor(Number.MAX_SAFE_INTEGER / PERIOD_MS), 1), all.lt)).toBeLessThan(0)
  })

})
