/**
 * The quality report's read through the scan port of a source that has no
 * `series` of its own (engine/quality/scan-series.ts): each symbol's part
 * of the report, over an array of records, as the reference model computes
 * it. The store's own `series` is checked the same way in
 * store-model.prop.test.ts. Fixed seed.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { symbolQuality } from '../../src/engine/quality/feed-quality.js'
import { toQualityQuery } from '../../src/engine/quality/quality-query.js'
import { readSeries } from '../../src/engine/quality/scan-series.js'
import { referenceQuality } from '../../src/testing/index.js'
import { DEFAULT_LIMITS } from '../../src/types.js'
import { ArraySource } from '../support/array-source.js'
import { qualityCaseArb } from './arbitraries.js'

const LIMITS = { ...DEFAULT_LIMITS, maxRangePoints: 1_000_000 }

describe('quality over a scan source without series', () => {
  it('reports each symbol as the reference model does', async () => {
    await fc.assert(
      fc.asyncProperty(qualityCaseArb, fc.integer({ min: 1, max: 5 }), async ({ records, options }, batchSize) => {
        const source = new ArraySource(records, { batchSize })
        expect('series' in source).toBe(false)
        const query = toQualityQuery(options, LIMITS)
        const symbols = query.symbols === 'all' ? await source.symbols() : query.symbols
        const window = { from: query.from, to: query.to, values: query.moves, sources: query.sources }
        const reports = []
        let at = 0
        for await (const series of readSeries(source, symbols, window)) reports.push(symbolQuality(symbols[at++] as string, series, query))
        expect(reports).toEqual((referenceQuality(records, options) as { readonly symbols: unknown }).symbols)
      }),
      { seed: 2223, numRuns: 60 },
    )
  })
})
