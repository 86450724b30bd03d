/**
 * The quality kernel (engine/quality/) against the reference model
 * (testing/reference-forms/quality.ts) on generated data, over a plain
 * array: no store. A fixed seed keeps the run the same every time.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { symbolQuality } from '../../src/engine/quality/feed-quality.js'
import { toQualityQuery } from '../../src/engine/quality/quality-query.js'
import type { QualitySeries } from '../../src/engine/quality/series.js'
import { compareRecords, referenceQuality } from '../../src/testing/index.js'
import { DEFAULT_LIMITS, type PriceRecord } from '../../src/types.js'
import { qualityCaseArb } from './arbitraries.js'

/** A symbol's records in the window as the kernel reads them. */
export function seriesOf(records: readonly PriceRecord[], symbol: string, from: number, to: number, values = true): QualitySeries {
  const rows = records.filter((r) => r.symbol === symbol && r.timestamp >= from && r.timestamp <= to).sort(compareRecords)
  return {
    length: rows.length,
    timestamps: Float64Array.from(rows, (r) => r.timestamp),
    values: values ? Float64Array.from(rows, (r) => r.value) : undefined,
    idAt: (i) => (rows[i] as PriceRecord).id,
    sourceAt: (i) => (rows[i] as PriceRecord).source,
  }
}

describe('the quality kernel', () => {
  it('reports as the reference model does, symbol by symbol', () => {
    fc.assert(
      fc.property(qualityCaseArb, ({ records, options }) => {
        const query = toQualityQuery(options, { ...DEFAULT_LIMITS, maxRangePoints: 1_000_000 })
        const stored = [...new Set(records.map((r) => r.symbol))].sort()
        const symbols = options.symbols ?? stored
        const got = symbols.map((symbol) => symbolQuality(symbol, seriesOf(records, symbol, query.from, query.to, query.moves), query))
        const want = referenceQuality(records, { ...options, symbols }) as { symbols: unknown[] }
        expect(JSON.parse(JSON.stringify(got))).toEqual(JSON.parse(JSON.stringify(want.symbols)))
        expect(got).toEqual(want.symbols)
      }),
      { seed: 22_2, numRuns: 400 },
    )
  })
})
