/**
 * fast-check arbitraries of price records: records that collide on purpose
 * (shared timestamps, shared or prefix ids, bucket edges, ids whose UTF-8
 * and UTF-16 orders disagree), data sets of them, and invalid records.
 */
import fc from 'fast-check'
import type { Limits } from '../types.js'
import { T0, TEST_PROVIDER, type InputRecord } from './records.js'

/** Small caps so property tests actually hit them. */
export const TEST_LIMITS: Limits = Object.freeze({ maxLimit: 50, maxSymbols: 5, maxRangePoints: 10 })

/** Mostly null: for rare tweaks (fc.option's `freq` is the other way round). */
export const rarely = <T>(arb: fc.Arbitrary<T>, oneIn: number): fc.Arbitrary<T | null> =>
  fc.oneof({ arbitrary: fc.constant(null), weight: oneIn - 1 }, { arbitrary: arb, weight: 1 })

/** The largest timestamp a record may have (2^53 − 1). */
export const MAX_SAFE = Number.MAX_SAFE_INTEGER
const MINUTE = 60_000
const HOUR = 3_600_000
const DAY = 86_400_000
/** Intervals that are multiples of a minute, 10 minutes, an hour or a day: a store may sample them from a pre-built bucket index. */
export const INDEXED_INTERVALS: readonly number[] = [MINUTE, 2 * MINUTE, 10 * MINUTE, 20 * MINUTE, HOUR, 2 * HOUR, DAY, 2 * DAY]

/** Valid symbols that trip naive code: prefixes, case, dots, unicode, prototype names, integer-like keys, 64 code points. */
export const TRICKY_SYMBOLS: readonly string[] = [
  'BTC',
  'BTC-USD',
  'B',
  'stETH',
  'USDC.e',
  'Ω€',
  '__proto__',
  'constructor',
  'hasOwnProperty',
  '42',
  'ETH/USD',
  'a\u0301',
  '\u{1F600}'.repeat(64),
  'x'.repeat(64),
  '\uFFFD',
]

/** Strings that break a symbol rule: empty, comma, whitespace (incl. NBSP, U+2028, BOM), control, length, lone surrogate. */
export const INVALID_SYMBOLS: readonly string[] = [
  '',
  'BTC USD',
  'A,B',
  'BTC\t',
  '\u00A0',
  'a\u2028',
  '\uFEFF',
  'a\u0000',
  'DEL\u007F',
  '\u0085',
  'x'.repeat(65),
  '\u{1F600}'.repeat(65),
  '\uD800',
  'a\uDC00b',
]

/** Any valid symbol: the tricky list or short strings from a mixed alphabet. */
export const symbolArb: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(...TRICKY_SYMBOLS),
  fc.string({ unit: fc.constantFrom('A', 'b', '-', '.', '_', '/', '0', 'Ω', '€', '\u{1F600}', '\uFF61'), minLength: 1, maxLength: 8 }),
)

/** Ids where UTF-8 and UTF-16 order disagree (U+FF61 vs U+1F600), prefixes of each other, and edge lengths. */
export const TRICKY_IDS: readonly string[] = [
  'a',
  'ab',
  'abc',
  'b',
  'Z',
  'z',
  'é',
  '\u00A0',
  '\u00A1',
  '\u07FF',
  '\u0800',
  '\uFF61',
  '\u{1F600}',
  'a\uFF61',
  'a\u{1F600}',
  'x'.repeat(128),
  '\u{1F600}'.repeat(128),
]

/** Any valid record id: mostly {@link TRICKY_IDS}, some uuids and short grapheme strings. */
export const idArb: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: fc.constantFrom(...TRICKY_IDS), weight: 6 },
  { arbitrary: fc.uuid(), weight: 1 },
  { arbitrary: fc.string({ unit: 'grapheme-composite', minLength: 1, maxLength: 4 }).filter((s) => !/\p{Cc}/u.test(s)), weight: 1 },
)

/** Data intervals: ms, minute, hour, day and odd sizes. */
export const dataIntervalArb: fc.Arbitrary<number> = fc.oneof(
  { arbitrary: fc.constantFrom(1, 2, 7, 1000, 30_000, 5 * MINUTE, ...INDEXED_INTERVALS), weight: 4 },
  { arbitrary: fc.integer({ min: 1, max: 300_000 }), weight: 2 },
  { arbitrary: fc.constantFrom(DAY, 10_000_000), weight: 1 },
)

/** Timestamps on and next to bucket edges (minute, 10 minutes, hour, day, `interval`), plus a few far ones (0, 2^32, 2^53-1). */
export function timestampArb(interval: number): fc.Arbitrary<number> {
  const edge = (step: number, maxK: number) =>
    fc
      .tuple(fc.integer({ min: 0, max: maxK }), fc.constantFrom(-1, 0, 0, 1))
      .map(([k, d]) => Math.max(0, Math.floor(T0 / step) * step + k * step + d))
  return fc.oneof(
    { arbitrary: edge(MINUTE, 180), weight: 4 },
    { arbitrary: edge(HOUR, 3), weight: 2 },
    { arbitrary: edge(10 * MINUTE, 18), weight: 1 },
    { arbitrary: edge(DAY, 2), weight: 1 },
    { arbitrary: edge(interval, 40).filter((t) => t <= MAX_SAFE), weight: 4 },
    { arbitrary: fc.integer({ min: T0, max: T0 + 3 * HOUR }), weight: 2 },
    { arbitrary: fc.constantFrom(0, 1, 59_999, 60_000, 60_001, 2 ** 32, MAX_SAFE - 1, MAX_SAFE), weight: 1 },
  )
}

// JSON-only values (no -0: JSON cannot carry it) including integers past 2^32.
const jsonLeaf = fc.oneof(
  fc.integer(),
  fc.maxSafeInteger(),
  fc.double({ noNaN: true, noDefaultInfinity: true }).filter((x) => !Object.is(x, -0)),
  fc.string({ unit: 'grapheme', maxLength: 6 }),
  fc.boolean(),
  fc.constant(null),
)
const sourceKeyArb = fc.constantFrom('binance', 'coinbase', 'kraken', 'a b', 'Ω', '0', '')
/** A record's `source`: a small object of JSON values (no `-0`, which JSON cannot carry), nested a little. */
export const sourceArb: fc.Arbitrary<Record<string, unknown>> = fc.dictionary(
  sourceKeyArb,
  fc.oneof(jsonLeaf, fc.array(jsonLeaf, { maxLength: 3 }), fc.dictionary(sourceKeyArb, jsonLeaf, { maxKeys: 2, noNullPrototype: true })),
  { maxKeys: 4, noNullPrototype: true },
)

/** Any finite float, -0, subnormals and extremes included. */
export const valueArb: fc.Arbitrary<number> = fc.oneof(
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(-0, 0, 5e-324, Number.MAX_VALUE, 0.1 + 0.2, 30_000.12),
)

// Prototype names too: JSON.parse makes them own fields, and the store must keep them like any other extra.
const EXTRA_FIELDS = ['evmSignature', 'liteEvmSignature', 'note', 'zz', 'aa', '__proto__', 'constructor', 'toString'] as const

/** One valid input record over `symbols`, with extras, optional key/minutes and a shuffled key order. */
export function inputRecordArb(
  symbols: readonly string[],
  interval: number,
  keys: { timestamp?: fc.Arbitrary<number>; id?: fc.Arbitrary<string> } = {},
): fc.Arbitrary<InputRecord> {
  return fc
    .record({
      // Skewed toward the first symbol, so one series is long enough to hit the range cap.
      symbol: fc.oneof({ arbitrary: fc.constant(symbols[0]!), weight: 2 }, { arbitrary: fc.constantFrom(...symbols), weight: 1 }),
      id: keys.id ?? idArb,
      timestamp: keys.timestamp ?? timestampArb(interval),
      value: valueArb,
      signature: fc.string({ minLength: 1, maxLength: 12 }),
      permawebTx: fc.string({ maxLength: 12 }),
      version: fc.constantFrom('0.4', '3', ''),
      source: sourceArb,
      extras: fc.uniqueArray(fc.tuple(fc.constantFrom(...EXTRA_FIELDS), jsonLeaf), { maxLength: 3, selector: ([k]) => k }),
      withKey: fc.boolean(),
      minutes: rarely(fc.integer({ min: -5, max: 99 }), 4),
      order: fc.array(fc.double({ noNaN: true }), { minLength: 16, maxLength: 16 }),
    })
    .map(({ extras, withKey, minutes, order, ...known }) => {
      const entries: [string, unknown][] = [...Object.entries({ ...known, provider: TEST_PROVIDER.id }), ...extras]
      if (withKey) entries.push(['providerPublicKey', TEST_PROVIDER.publicKey])
      if (minutes !== null) entries.push(['minutes', minutes])
      // Writers do not always put fields in the canonical order; the store must not care.
      const shuffled = entries.map((e, i) => [e, order[i] ?? 0] as const).sort((a, b) => a[1] - b[1])
      return Object.fromEntries(shuffled.map(([e]) => e)) as InputRecord
    })
}

/** A data set: a few symbols, an interval the timestamps cluster around, and the records. */
export interface DataSet {
  readonly symbols: readonly string[]
  readonly interval: number
  /** Timestamps the records share, so queries can aim at (and next to) them. */
  readonly timestamps: readonly number[]
  readonly records: readonly InputRecord[]
}

/**
 * A data set of up to 80 records over 1 to 4 symbols. Timestamps and ids
 * come from small pools, so equal timestamps, equal keys (the last write
 * wins) and UTF-8 vs UTF-16 id order clashes are common.
 */
export const dataSetArb: fc.Arbitrary<DataSet> = fc
  .record({
    symbols: fc.uniqueArray(fc.oneof({ arbitrary: fc.constantFrom('BTC', 'BTC-USD', 'stETH'), weight: 3 }, { arbitrary: symbolArb, weight: 1 }), {
      minLength: 1,
      maxLength: 4,
    }),
    interval: dataIntervalArb,
  })
  .chain(({ symbols, interval }) =>
    fc
      .record({
        // Small pools of timestamps and ids make equal timestamps and equal (symbol, timestamp, id) keys common.
        timestamps: fc.uniqueArray(timestampArb(interval), { minLength: 1, maxLength: 40, size: 'medium' }),
        // Half the time the pool holds ids whose UTF-8 and UTF-16 orders disagree, so equal timestamps must tie-break by bytes.
        ids: fc
          .tuple(fc.uniqueArray(idArb, { minLength: 1, maxLength: 6 }), fc.boolean())
          .map(([ids, clash]) => [...new Set(clash ? [...ids, '\uFF61', '\u{1F600}', 'a\uFFFD', 'a\u{10000}'] : ids)]),
      })
      .chain(({ timestamps, ids }) =>
        fc.record({
          symbols: fc.constant(symbols),
          interval: fc.constant(interval),
          timestamps: fc.constant(timestamps),
          records: fc.array(
            inputRecordArb(symbols, interval, {
              timestamp: fc.oneof({ arbitrary: fc.constantFrom(...timestamps), weight: 4 }, { arbitrary: timestampArb(interval), weight: 1 }),
              id: fc.oneof({ arbitrary: fc.constantFrom(...ids), weight: 3 }, { arbitrary: idArb, weight: 1 }),
            }),
            { maxLength: 80, size: 'medium' },
          ),
        }),
      ),
  )

/** Splits `items` into consecutive batches at the given cut points. */
export function splitBatches<T>(items: readonly T[], cuts: readonly number[]): T[][] {
  const points = [...new Set(cuts.map((c) => c % (items.length + 1)))].sort((a, b) => a - b)
  const batches: T[][] = []
  let start = 0
  for (const p of [...points, items.length]) {
    if (p > start) batches.push(items.slice(start, p))
    start = Math.max(start, p)
  }
  return batches
}

// ---- invalid records ----

/** A bad value for one field, and the field the error must name (undefined: the record is not an object). */
export interface BadRecord {
  readonly record: unknown
  readonly field: string | undefined
}

const DELETE = Symbol('delete')
const BAD_VALUES: Readonly<Record<string, readonly unknown[]>> = {
  id: ['', 'x'.repeat(129), '\u{1F600}'.repeat(129), '\uD800', 'a\uDC00', 'a\u0000b', 'a\nb', '\u009F', 5, null, DELETE],
  symbol: [...INVALID_SYMBOLS, 5, null, DELETE],
  provider: [TEST_PROVIDER.name, TEST_PROVIDER.publicKey, '', `${TEST_PROVIDER.id} `, null, DELETE],
  value: [NaN, Infinity, -Infinity, '1', null, 1n, DELETE],
  signature: ['', 5, null, DELETE],
  permawebTx: [5, null, {}, DELETE],
  version: [4, null, DELETE],
  source: [null, [], 'x', 5, DELETE],
  timestamp: [-1, 1.5, 2 ** 53, NaN, Infinity, '1700000000000', null, -0.5, DELETE],
  providerPublicKey: ['nope', '', `${TEST_PROVIDER.publicKey}=`, 5, null],
}

/** A record from `base` with one field spoiled (or not an object at all), and the field the store's error must name. */
export function badRecordArb(base: fc.Arbitrary<InputRecord>): fc.Arbitrary<BadRecord> {
  const field = fc.constantFrom(...Object.keys(BAD_VALUES))
  const spoiled = fc.tuple(base, field).chain(([record, name]) =>
    fc.constantFrom(...BAD_VALUES[name]!).map((bad): BadRecord => {
      const copy: Record<string, unknown> = { ...record }
      if (bad === DELETE) delete copy[name]
      else copy[name] = bad
      return { record: copy, field: name }
    }),
  )
  const notObject = fc.constantFrom<unknown>(null, undefined, 42, 'record', true).map((record): BadRecord => ({ record, field: undefined }))
  return fc.oneof({ arbitrary: spoiled, weight: 12 }, { arbitrary: notObject, weight: 1 })
}
