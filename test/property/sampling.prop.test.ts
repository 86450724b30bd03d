import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { type PriceRecord, type SampledRecord } from '../../src/index.js'
import { sampleByInterval } from '../../src/engine.js'
import { minuteOfHour } from '../../src/engine/kernels/sample.js'
import { dataIntervalArb, idArb, timestampArb } from '../../src/testing/record-arbitraries.js'
import { makeRecord, T0, TEST_PROVIDER } from '../../src/testing/records.js'
import { compareRecords, toReturned } from '../../src/testing/reference-model.js'

const HOUR = 3_600_000
// FC_SCALE=10 npx vitest run test/property multiplies every run count, for a deeper search before a release.
const scale = Number(process.env['FC_SCALE']) || 1

/**
 * Stored records of one symbol, unique by (timestamp, id), ascending as a scan
 * yields them. Timestamps come from a small pool so many share a millisecond.
 */
const seriesArb = fc
  .record({
    interval: fc.oneof(dataIntervalArb, fc.constant(Number.MAX_SAFE_INTEGER)),
    pool: fc.uniqueArray(fc.nat({ max: 10_000 }), { minLength: 1, maxLength: 30 }),
  })
  .chain(({ interval, pool }) =>
    fc.record({
      interval: fc.constant(interval),
      records: fc
        .uniqueArray(fc.tuple(fc.oneof(timestampArb(interval), fc.constantFrom(...pool.map((p) => T0 + p))), idArb), {
          maxLength: 80,
          selector: ([t, id]) => `${t}\u0000${id}`,
        })
        .map((keys) => keys.map(([timestamp, id]) => toReturned(makeRecord({ timestamp, id }), TEST_PROVIDER)).sort(compareRecords)),
      asGenerator: fc.boolean(),
    }),
  )

const bucketOf = (interval: number) => (r: PriceRecord) => Math.floor(r.timestamp / interval)

function withoutMinutes(r: SampledRecord): PriceRecord {
  const { minutes: _, ...rest } = r
  return rest
}

// Date stops at 8.64e15 ms, below 2^53; the minute of the hour repeats every day, so reduce first.
const utcMinute = (t: number) => new Date(t % 86_400_000).getUTCMinutes()

function* iterate<T>(items: readonly T[]): Generator<T> {
  yield* items
}

describe('sampleByInterval', () => {
  it('keeps exactly the latest record of every non-empty epoch bucket, oldest first', () => {
    fc.assert(
      fc.property(seriesArb, ({ interval, records, asGenerator }) => {
        const before = structuredClone(records)
        const out = sampleByInterval(asGenerator ? iterate(records) : records, interval)
        const bucket = bucketOf(interval)

        // Strictly increasing buckets: sorted ascending and at most one record per bucket.
        for (let i = 1; i < out.length; i++) expect(bucket(out[i]!)).toBeGreaterThan(bucket(out[i - 1]!))
        expect(new Set(out.map(bucket))).toEqual(new Set(records.map(bucket)))

        for (const rep of out) {
          const members = records.filter((r) => bucket(r) === bucket(rep))
          const latest = members.reduce((a, b) => (compareRecords(a, b) >= 0 ? a : b))
          expect(withoutMinutes(rep)).toEqual(latest)
          expect(Object.keys(rep)).toEqual([...Object.keys(latest), 'minutes'])
          expect(rep.minutes).toBe(utcMinute(rep.timestamp))
        }
        expect(records).toEqual(before)
      }),
      { numRuns: Math.ceil(300 * scale) },
    )
  })

  it('interval=1 returns every record except the lesser ids sharing a millisecond', () => {
    fc.assert(
      fc.property(seriesArb, ({ records }) => {
        const expected = records.filter((r, i) => records[i + 1]?.timestamp !== r.timestamp)
        expect(sampleByInterval(records, 1).map(withoutMinutes)).toEqual(expected)
      }),
      { numRuns: Math.ceil(200 * scale) },
    )
  })

  it('with one record a minute, interval=3600000 returns the record of minute 59 of each hour', () => {
    const hourlyArb = fc.record({
      firstHour: fc.integer({ min: 0, max: 1000 }),
      hours: fc.integer({ min: 1, max: 4 }),
      // Where inside its minute each record falls, and its id: neither may change the answer.
      offsets: fc.array(fc.integer({ min: 0, max: 59_999 }), { minLength: 240, maxLength: 240 }),
      ids: fc.array(idArb, { minLength: 240, maxLength: 240 }),
    })
    fc.assert(
      fc.property(hourlyArb, ({ firstHour, hours, offsets, ids }) => {
        const start = T0 + firstHour * HOUR
        const records = Array.from({ length: hours * 60 }, (_, m) =>
          toReturned(makeRecord({ timestamp: start + m * 60_000 + offsets[m]!, id: ids[m]! }), TEST_PROVIDER),
        )
        const out = sampleByInterval(records, HOUR)
        expect(out.map((r) => r.minutes)).toEqual(Array(hours).fill(59))
        expect(out.map(withoutMinutes)).toEqual(records.filter((_, m) => m % 60 === 59))
      }),
      { numRuns: Math.ceil(100 * scale) },
    )
  })

  it('minuteOfHour is the UTC minute of the hour', () => {
    fc.assert(
      fc.property(fc.oneof(fc.integer({ min: 0, max: 4 * 10 ** 12 }), fc.maxSafeNat()), (t) => {
        expect(minuteOfHour(t)).toBe(utcMinute(t))
      }),
      { numRuns: Math.ceil(100 * scale) },
    )
  })

  it('an empty input gives an empty output', () => {
    expect(sampleByInterval([], 60_000)).toEqual([])
  })
})
