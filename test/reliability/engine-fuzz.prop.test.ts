/**
 * Hostile input to the query engine (SPEC §4, issue 5): raw query strings
 * (through `new URLSearchParams`) and raw parameter objects, as hostile as
 * fast-check makes them — any Unicode incl. lone surrogates, huge strings,
 * `%`-garbage, repeated keys, prototype names (`__proto__`, `constructor`,
 * `toString`, `hasOwnProperty`) as names and values, arrays, numbers,
 * objects and other non-strings — against `store.query`, the exact body
 * behind GET /prices. For every input:
 *
 * - it settles (a per-call timeout fails the test on a hang);
 * - it throws nothing but a PriceStoreError with a documented query code,
 *   whose message stays short (a huge input is not echoed back);
 * - an answer has the documented shape: an array of records with exactly
 *   the record fields (plus `minutes`, oldest first, for the range form;
 *   newest first otherwise), or an object keyed by symbol whose own keys are
 *   stored symbols and whose values are those symbols' records;
 * - the hot tail changes nothing: a store with the cache on gives the same
 *   outcome as one with it off, also when queries run concurrently;
 * - nothing leaks into Object.prototype.
 */
import fc from 'fast-check'
import { MemoryLevel } from 'memory-level'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PriceStore, PriceStoreError, isPriceStoreError } from '../../src/index.js'
import type { PriceStoreErrorCode, QueryParams } from '../../src/index.js'

const PROVIDER = Object.freeze({ name: 'redstone', id: 'fuzz-provider-id', publicKey: 'fuzz-provider-key' })
/** Small caps, so fuzzed queries reach them. */
const LIMITS = { maxLimit: 40, maxSymbols: 4, maxRangePoints: 25 }
const T0 = 1_699_999_200_000
const STEP = 30_000
const PER_SYMBOL = 40
const SYMBOLS = ['BTC', 'ETH', '__proto__', 'constructor', 'toString', 'hasOwnProperty', 'Ω€', '42']
const HANG_MS = 10_000

/** The codes `store.query` documents for bad parameters and over-large ranges on an open store (src/errors.ts, docs/errors.md). */
const QUERY_CODES: readonly PriceStoreErrorCode[] = [
  'PRICE_INVALID_SYMBOL', 'PRICE_INVALID_QUERY', 'PRICE_INVALID_RANGE', 'PRICE_INVALID_INTERVAL',
  'PRICE_UNSUPPORTED_PROVIDER', 'PRICE_RANGE_TOO_LARGE',
]
const KNOWN = ['symbol', 'symbols', 'provider', 'limit', 'offset', 'fromTimestamp', 'toTimestamp', 'interval']
const RECORD_FIELDS = ['id', 'symbol', 'provider', 'value', 'signature', 'permawebTx', 'version', 'source', 'timestamp', 'providerPublicKey']
const PROTOTYPE_NAMES = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf', 'prototype', '__defineGetter__', 'isPrototypeOf']

let cached: PriceStore
let uncached: PriceStore
const prototypeBefore = Object.getOwnPropertyNames(Object.prototype).sort()

beforeAll(async () => {
  const records = SYMBOLS.flatMap((symbol, s) =>
    Array.from({ length: PER_SYMBOL }, (_, i) => ({
      id: `${symbol}-${i % 7 === 3 ? 'tie' : i}`,
      symbol,
      provider: PROVIDER.id,
      value: s * 1000 + i + 0.5,
      signature: `sig-${s}-${i}`,
      permawebTx: `tx-${s}-${i}`,
      version: '0.4',
      source: { exchange: i },
      // Some records share a timestamp; they spread over 20 minutes.
      timestamp: T0 + Math.floor(i / 2) * STEP + (i % 2),
    })),
  )
  cached = await PriceStore.open(new MemoryLevel(), { provider: PROVIDER, limits: LIMITS, cache: { recordsPerSymbol: 6 } })
  uncached = await PriceStore.open(new MemoryLevel(), { provider: PROVIDER, limits: LIMITS, cache: { recordsPerSymbol: 0 } })
  await cached.putMany(records)
  await uncached.putMany(records)
})

afterAll(async () => {
  await cached?.close()
  await uncached?.close()
})

// ---------------------------------------------------------------------------
// Arbitraries.

const hugeStrings = ['9'.repeat(20_000), 'A'.repeat(100_000), ','.repeat(5_000), 'BTC,'.repeat(3_000), '\u{1F600}'.repeat(10_000), '%'.repeat(10_000), '0'.repeat(50_000) + '1']
const percentGarbage = fc.constantFrom('%', '%%', '%z', '%zz', '%0', '%00', '%E0%A4', '%C0%AF', '%F0%9F', '%ED%A0%80', '%FF', '%25', '%2C', '%26', '%3D', '%2B', '+', '%20')
const numbers = fc.oneof(
  fc.nat().map(String),
  fc.constantFrom('0', '1', '-1', '1e3', '0x10', '1.5', ' 1', '1 ', '01', '00000000000000000001', '9007199254740991', '9007199254740992', String(T0), String(T0 + 600_000), 'Infinity', 'NaN', '٣', '１'),
)
const valueText: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: fc.constantFrom(...SYMBOLS, 'NONE', 'BTC,ETH', 'ETH,BTC,ETH', '__proto__,constructor', 'redstone', PROVIDER.id, '', ',', 'a b'), weight: 4 },
  { arbitrary: numbers, weight: 4 },
  { arbitrary: fc.constantFrom(...PROTOTYPE_NAMES), weight: 1 },
  { arbitrary: fc.string({ unit: 'binary', maxLength: 40 }), weight: 2 },
  { arbitrary: fc.string({ unit: 'grapheme', maxLength: 20 }), weight: 1 },
  { arbitrary: fc.array(fc.oneof(percentGarbage, fc.string({ maxLength: 3 })), { maxLength: 8 }).map((parts) => parts.join('')), weight: 2 },
  { arbitrary: fc.constantFrom(...hugeStrings), weight: 1 },
)
const nameText: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: fc.constantFrom(...KNOWN), weight: 8 },
  { arbitrary: fc.constantFrom(...PROTOTYPE_NAMES), weight: 2 },
  { arbitrary: fc.constantFrom('Symbol', 'SYMBOL', 'symbol ', 'symbol[]', 'limit%00', 'from', 'to', ''), weight: 1 },
  { arbitrary: fc.string({ unit: 'binary', maxLength: 12 }), weight: 1 },
)

/** Raw query strings: structured pairs (with repeats and garbage), or any text at all. */
const queryString: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: fc.array(fc.tuple(nameText, valueText, fc.constantFrom('=', '==', '', '=&')), { maxLength: 8 }).map((pairs) => pairs.map(([n, v, eq]) => `${n}${eq}${v}`).join('&')), weight: 4 },
  { arbitrary: fc.array(fc.tuple(nameText, valueText), { maxLength: 6 }).map((pairs) => new URLSearchParams(pairs).toString()), weight: 3 },
  { arbitrary: fc.string({ unit: 'binary', maxLength: 200 }), weight: 1 },
  { arbitrary: fc.array(fc.oneof(percentGarbage, fc.constantFrom('&', '=', '?', '#', 'symbol', 'limit')), { maxLength: 30 }).map((parts) => parts.join('')), weight: 1 },
)

/** Any value a careless caller may put in a plain parameter object. */
const rawValue: fc.Arbitrary<unknown> = fc.oneof(
  { arbitrary: valueText, weight: 6 },
  { arbitrary: fc.array(valueText, { maxLength: 3 }), weight: 2 },
  { arbitrary: fc.constantFrom(undefined, null, true, false, 0, -0, 1, Number.NaN, Number.POSITIVE_INFINITY, 10n, Symbol('x'), () => 'BTC', [], [[]], {}, new Date(0), Object.create(null)), weight: 2 },
  { arbitrary: fc.anything({ maxDepth: 2 }), weight: 1 },
  { arbitrary: fc.array(fc.anything({ maxDepth: 1 }), { maxLength: 3 }), weight: 1 },
)

/** Plain parameter objects, own properties only (defined, so `__proto__` is a real key), with odd prototypes sometimes. */
const paramObject: fc.Arbitrary<Record<string, unknown>> = fc
  .tuple(fc.array(fc.tuple(nameText, rawValue), { maxLength: 8 }), fc.constantFrom('plain', 'null', 'inherits'))
  .map(([entries, proto]) => {
    const target: Record<string, unknown> =
      proto === 'null' ? Object.create(null) : proto === 'inherits' ? Object.create({ symbol: 'BTC', limit: '2', interval: '1' }) : {}
    for (const [name, value] of entries) Object.defineProperty(target, name, { value, enumerable: true, writable: true, configurable: true })
    return target
  })

const params: fc.Arbitrary<{ label: string; value: QueryParams }> = fc.oneof(
  queryString.map((text) => ({ label: `?${text.slice(0, 300)}`, value: new URLSearchParams(text) })),
  paramObject.map((object) => ({ label: labelOf(object), value: object as QueryParams })),
)

function labelOf(object: object): string {
  try {
    return Reflect.ownKeys(object).map((key) => `${String(key)}=${String((object as Record<PropertyKey, unknown>)[key]).slice(0, 60)}`).join(' ').slice(0, 300)
  } catch {
    return '<unprintable>'
  }
}

// ---------------------------------------------------------------------------
// Running and checking.

type Outcome = { readonly answer: unknown } | { readonly code: string }

async function run(store: PriceStore, value: QueryParams, label: string): Promise<Outcome> {
  let timer: NodeJS.Timeout | undefined
  const hang = new Promise<'hang'>((resolve) => {
    timer = setTimeout(() => resolve('hang'), HANG_MS)
  })
  let thrown: unknown
  let result: unknown
  try {
    result = await Promise.race([store.query(value), hang])
  } catch (err) {
    thrown = err
  } finally {
    clearTimeout(timer)
  }
  if (result === 'hang') throw new Error(`store.query did not settle within ${HANG_MS} ms for ${label}`)
  if (thrown !== undefined) {
    if (!(thrown instanceof PriceStoreError) || !isPriceStoreError(thrown)) throw new Error(`store.query threw a non-PriceStoreError for ${label}: ${String(thrown)}`, { cause: thrown })
    expect(QUERY_CODES, `undocumented code for ${label}: ${thrown.message}`).toContain(thrown.code)
    expect(thrown.message.length, `an error message echoes the input for ${label}`).toBeLessThan(1_000)
    if (thrown.details.parameter !== undefined) expect([...KNOWN], label).toContain(thrown.details.parameter)
    return { code: thrown.code }
  }
  checkShape(result, label)
  return { answer: result }
}

function checkRecord(record: unknown, label: string, ranged: boolean): asserts record is Record<string, unknown> {
  expect(typeof record === 'object' && record !== null && !Array.isArray(record), label).toBe(true)
  expect(Object.keys(record as object), label).toEqual(ranged ? [...RECORD_FIELDS, 'minutes'] : RECORD_FIELDS)
  const r = record as Record<string, unknown>
  expect(SYMBOLS, label).toContain(r.symbol)
  expect(r.provider, label).toBe(PROVIDER.id)
  expect(r.providerPublicKey, label).toBe(PROVIDER.publicKey)
  expect(Number.isSafeInteger(r.timestamp), label).toBe(true)
  if (ranged) expect(r.minutes, label).toBe(Math.floor((r.timestamp as number) / 60_000) % 60)
}

function checkShape(answer: unknown, label: string): void {
  // What the HTTP adapter sends must survive JSON unchanged.
  expect(JSON.parse(JSON.stringify(answer)), label).toEqual(answer)
  if (Array.isArray(answer)) {
    const ranged = answer.length > 0 && Object.hasOwn(answer[0] as object, 'minutes')
    for (const record of answer) checkRecord(record, label, ranged)
    const symbols = new Set(answer.map((record) => (record as { symbol: string }).symbol))
    expect(symbols.size, `one symbol per array answer: ${label}`).toBeLessThanOrEqual(1)
    const times = answer.map((record) => (record as { timestamp: number }).timestamp)
    for (let i = 1; i < times.length; i++) {
      if (ranged) expect(times[i] as number, `range answers are oldest first: ${label}`).toBeGreaterThan(times[i - 1] as number)
      else expect(times[i] as number, `latest answers are newest first: ${label}`).toBeLessThanOrEqual(times[i - 1] as number)
    }
    expect(answer.length, label).toBeLessThanOrEqual(ranged ? LIMITS.maxRangePoints : LIMITS.maxLimit)
    return
  }
  expect(typeof answer === 'object' && answer !== null, `an answer is an array or an object: ${label}`).toBe(true)
  expect(Object.getPrototypeOf(answer), label).toBe(Object.prototype)
  for (const key of Reflect.ownKeys(answer as object)) {
    expect(typeof key, label).toBe('string')
    const descriptor = Object.getOwnPropertyDescriptor(answer, key)
    expect(descriptor?.enumerable, label).toBe(true)
    const record = descriptor?.value
    checkRecord(record, label, false)
    expect(record.symbol, `keyed by its own symbol: ${label}`).toBe(key)
  }
}

function same(a: Outcome, b: Outcome, label: string): void {
  if ('code' in a || 'code' in b) expect(a, label).toEqual(b)
  else expect(JSON.stringify(a.answer), label).toBe(JSON.stringify(b.answer))
}

// ---------------------------------------------------------------------------

describe('store.query under hostile input', () => {
  it('raw query strings and raw parameter objects: a documented coded error or a well-formed answer, the same with the cache on and off', async () => {
    const seen = new Set<string>()
    await fc.assert(
      fc.asyncProperty(params, async ({ label, value }) => {
        const fromDisk = await run(uncached, value, label)
        const fromTail = await run(cached, value, label)
        same(fromTail, fromDisk, `cache on vs off: ${label}`)
        seen.add('code' in fromDisk ? fromDisk.code : Array.isArray(fromDisk.answer) ? 'array' : 'object')
      }),
      { numRuns: 1_500 },
    )
    // The hostile mix still reaches answers of both shapes, and several kinds of refusal.
    expect(seen).toContain('array')
    expect(seen).toContain('object')
    expect(seen.size).toBeGreaterThanOrEqual(5)
  })

  it('concurrent hostile queries settle each as it would alone', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(params, { minLength: 2, maxLength: 10 }), async (batch) => {
        const alone: Outcome[] = []
        for (const { label, value } of batch) alone.push(await run(uncached, value, label))
        const together = await Promise.all(batch.flatMap(({ label, value }) => [run(cached, value, label), run(uncached, value, label)]))
        batch.forEach(({ label }, i) => {
          same(together[2 * i] as Outcome, alone[i] as Outcome, `concurrent, cache on: ${label}`)
          same(together[2 * i + 1] as Outcome, alone[i] as Outcome, `concurrent, cache off: ${label}`)
        })
      }),
      { numRuns: 150 },
    )
  })

  it('valid-looking queries mostly answer: the fuzzer reaches every form, not only the errors', async () => {
    const forms = new Set<string>()
    const general = fc.record({
      symbol: fc.option(fc.constantFrom(...SYMBOLS, 'NONE'), { nil: undefined }),
      symbols: fc.option(fc.constantFrom('BTC,ETH', '__proto__,constructor,toString', 'hasOwnProperty'), { nil: undefined }),
      limit: fc.option(fc.integer({ min: 1, max: 45 }).map(String), { nil: undefined }),
      offset: fc.option(fc.integer({ min: 0, max: 50 }).map(String), { nil: undefined }),
      fromTimestamp: fc.option(fc.oneof(fc.constant('0'), fc.integer({ min: 0, max: 45 }).map((i) => String(T0 + i * STEP - 1))), { nil: undefined }),
      toTimestamp: fc.option(fc.integer({ min: 0, max: 45 }).map((i) => String(T0 + i * STEP + 1)), { nil: undefined }),
      interval: fc.option(fc.constantFrom('1', '30000', '60000', '120000', '3600000'), { nil: undefined }),
      provider: fc.option(fc.constantFrom('redstone', PROVIDER.id), { nil: undefined }),
    })
    // Wide ranges, so the maxRangePoints cap is reached too.
    const wideRange = fc.record({
      symbol: fc.constantFrom(...SYMBOLS),
      interval: fc.constantFrom('1', '30000'),
      fromTimestamp: fc.constantFrom('0', String(T0)),
      toTimestamp: fc.constantFrom(String(T0 + 600_000), '9007199254740991'),
      limit: fc.option(fc.integer({ min: 1, max: 40 }).map(String), { nil: undefined }),
      offset: fc.option(fc.integer({ min: 0, max: 30 }).map(String), { nil: undefined }),
    })
    // Well-formed as-of queries (no interval; symbol or symbols, not both), in runs added to the others: most
    // general queries carry an interval, or both, so alone they reach the latest and several forms only a few
    // times a run, and sometimes not at all.
    const asOf = fc.oneof(
      fc.record({
        symbol: fc.constantFrom(...SYMBOLS, 'NONE'),
        limit: fc.option(fc.integer({ min: 1, max: 40 }).map(String), { nil: undefined }),
        offset: fc.option(fc.integer({ min: 0, max: 50 }).map(String), { nil: undefined }),
        fromTimestamp: fc.option(fc.constant('0'), { nil: undefined }),
        toTimestamp: fc.option(fc.integer({ min: 0, max: 45 }).map((i) => String(T0 + i * STEP + 1)), { nil: undefined }),
        provider: fc.option(fc.constantFrom('redstone', PROVIDER.id), { nil: undefined }),
      }),
      fc.record({
        symbols: fc.option(fc.constantFrom('BTC,ETH', '__proto__,constructor,toString', 'hasOwnProperty'), { nil: undefined }),
        toTimestamp: fc.option(fc.integer({ min: 0, max: 45 }).map((i) => String(T0 + i * STEP + 1)), { nil: undefined }),
        provider: fc.option(fc.constantFrom('redstone', PROVIDER.id), { nil: undefined }),
      }),
    )
    const known: fc.Arbitrary<Record<string, string | undefined>> = fc.oneof(
      { arbitrary: general, weight: 4 },
      { arbitrary: wideRange, weight: 1 },
      { arbitrary: asOf, weight: 1 },
    )
    await fc.assert(
      fc.asyncProperty(known, async (raw) => {
        const object: Record<string, string> = {}
        for (const [key, v] of Object.entries(raw)) if (v !== undefined) object[key] = v
        const label = new URLSearchParams(object).toString()
        const outcomes = [await run(uncached, object, label), await run(cached, new URLSearchParams(object), label)]
        same(outcomes[1] as Outcome, outcomes[0] as Outcome, label)
        const outcome = outcomes[0] as Outcome
        if ('code' in outcome) forms.add(outcome.code)
        else if (!Array.isArray(outcome.answer)) forms.add('several')
        else if (object.interval !== undefined) forms.add('range')
        else forms.add('latest')
      }),
      { numRuns: 720 },
    )
    for (const form of ['latest', 'several', 'range', 'PRICE_RANGE_TOO_LARGE', 'PRICE_INVALID_RANGE', 'PRICE_INVALID_QUERY']) expect(forms).toContain(form)
  })

  it('a closed store answers any parameters with a coded error, never anything else', async () => {
    const closed = await PriceStore.open(new MemoryLevel(), { provider: PROVIDER, limits: LIMITS })
    await closed.put({ id: 'a', symbol: 'BTC', provider: PROVIDER.id, value: 1, signature: 's', permawebTx: 't', version: '0.4', source: {}, timestamp: T0 })
    await closed.close()
    await fc.assert(
      fc.asyncProperty(params, async ({ value, label }) => {
        const err = await closed.query(value).then(
          () => undefined,
          (caught: unknown) => caught,
        )
        expect(err, `a closed store answered ${label}`).toBeDefined()
        expect(isPriceStoreError(err), `${label}: ${String(err)}`).toBe(true)
        expect([...QUERY_CODES, 'PRICE_NOT_OPEN'], label).toContain((err as PriceStoreError).code)
      }),
      { numRuns: 300 },
    )
  })

  it('leaves Object.prototype as it was', () => {
    expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(prototypeBefore)
    expect(({} as Record<string, unknown>).symbol).toBeUndefined()
  })
})
