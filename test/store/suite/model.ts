/**
 * The store suite's expectations, computed from what was written and never
 * from the store's own output: a small filter-and-sort model of the latest,
 * several and range forms ({@link Model}), and, for the newer forms (as-of
 * directions, candles, gap fill, TWAP), the naive reference model of
 * `price-store/testing` ({@link modelQuery}).
 */
import { DEFAULT_LIMITS } from '../../../src/index.js'
import type { NewPriceRecord, PriceRecord, QueryParams } from '../../../src/index.js'
import { T0, TEST_PROVIDER } from '../../../src/testing/records.js'
import { compareUtf8, referenceQuery, storedRecords, type ModelResult } from '../../../src/testing/reference-model.js'
import { expected, rec, type Input } from '../../support/records.js'

export const MAX = Number.MAX_SAFE_INTEGER
export const MINUTE = 60_000
export const HOUR = 3_600_000
/** An hour boundary: 2023-11-14T22:00:00Z (the test T0). */
export const H = T0

/** A record as `rec()` makes it: typed as the store's input, whatever the test put in it. */
export type Written = ReturnType<typeof rec>

/** A batch the type checker refuses, passed as a JavaScript caller would (the store checks it at run time). */
export function unchecked(records: readonly unknown[]): readonly NewPriceRecord[] {
  return records as readonly NewPriceRecord[]
}

function ascending(a: Input, b: Input): number {
  return (a.timestamp as number) - (b.timestamp as number) || compareUtf8(a.id as string, b.id as string)
}

/** What the latest, several and range forms must answer, by filtering and sorting what was written. */
export class Model {
  readonly #rows = new Map<string, Input>()

  add(records: Iterable<Input>): this {
    // Same (symbol, timestamp, id) replaces; symbols and ids never hold NUL.
    for (const r of records) this.#rows.set(`${r.symbol as string}\u0000${r.timestamp as number}\u0000${r.id as string}`, r)
    return this
  }

  /** Every record written, the last write of a key winning, as inputs. */
  written(): Input[] {
    return [...this.#rows.values()]
  }

  #of(symbol: string, from = 0, to = MAX): Input[] {
    return [...this.#rows.values()]
      .filter((r) => r.symbol === symbol && (r.timestamp as number) >= from && (r.timestamp as number) <= to)
      .sort(ascending)
  }

  latest(symbol: string, o: { limit?: number; offset?: number; from?: number; to?: number } = {}): Input[] {
    const offset = o.offset ?? 0
    return this.#of(symbol, o.from, o.to).reverse().slice(offset, offset + (o.limit ?? 1)).map((r) => expected(r))
  }

  several(symbols?: readonly string[], o: { from?: number; to?: number } = {}): Record<string, unknown> {
    const names = symbols === undefined ? this.symbols() : [...new Set(symbols)]
    const out: Record<string, unknown> = {}
    for (const name of names) {
      const [latest] = this.latest(name, { ...o, limit: 1 })
      if (latest !== undefined) Object.defineProperty(out, name, { value: latest, enumerable: true, writable: true, configurable: true })
    }
    return out
  }

  range(symbol: string, o: { from: number; to: number; interval: number; offset?: number; limit?: number }): Input[] {
    const buckets = new Map<number, Input>()
    for (const r of this.#of(symbol, o.from, o.to)) buckets.set(Math.floor((r.timestamp as number) / o.interval), r) // ascending: last wins
    const sampled = [...buckets.entries()].sort((a, b) => a[0] - b[0]).map(([, r]) => r)
    const offset = o.offset ?? 0
    return sampled.slice(offset, o.limit === undefined ? undefined : offset + o.limit).map((r) => expected(r, { minutes: true }))
  }

  symbols(): string[] {
    return [...new Set([...this.#rows.values()].map((r) => r.symbol as string))].sort(compareUtf8)
  }

  /** The records the store must hold, in the returned shape (the reference model's input). */
  stored(): PriceRecord[] {
    return storedRecords(this.written(), TEST_PROVIDER)
  }

  /** What `GET /prices` with `params` must answer (or fail with), by the reference model, for a store with the default limits. */
  query(params: QueryParams, limits = DEFAULT_LIMITS): ModelResult {
    return referenceQuery(this.stored(), params, { provider: TEST_PROVIDER, limits })
  }
}

/** A mixed data set: several symbols, a prefix pair, shared milliseconds, hour and minute edges, UTF-8 order traps. */
export function seedRecords(): Written[] {
  const out: Written[] = []
  for (let k = 0; k < 14; k++) out.push(rec({ symbol: 'BTC', timestamp: H - 20 * MINUTE + k * 7 * MINUTE + (k % 3) * 999 }))
  // Three records in one millisecond, ids whose UTF-8 and UTF-16 orders differ.
  for (const id of ['m', '\uE000', '\u{10000}']) out.push(rec({ symbol: 'BTC', timestamp: H + 30 * MINUTE, id }))
  out.push(rec({ symbol: 'BTC', timestamp: H + HOUR - 1 }), rec({ symbol: 'BTC', timestamp: H + HOUR }))
  for (let k = 0; k < 5; k++) out.push(rec({ symbol: 'ETH', timestamp: H + k * 20 * MINUTE + 5, value: 2000 + k }))
  for (let k = 0; k < 3; k++) out.push(rec({ symbol: 'BTC-USD', timestamp: H + 2 * HOUR + k })) // newer than every BTC record
  out.push(rec({ symbol: '\uE000x', timestamp: H + 1 }), rec({ symbol: '\u{1F600}', timestamp: H + 2 }), rec({ symbol: 'a', timestamp: H + 3 }))
  return out
}

export async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = []
  for await (const item of iterable) out.push(item)
  return out
}
