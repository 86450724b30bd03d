/**
 * price-store/testing (issue 13): the arbitraries and the reference model,
 * used as a host would (docs/testing.md shows the regions marked `docs:`
 * word for word), and kept apart from the engine and the main entry.
 * test/dist/check-dist.mjs loads the built entry through the package's
 * exports, as ESM and CommonJS, and runs a property with it too.
 */
import { readdir, readFile } from 'node:fs/promises'
import fc from 'fast-check'
import { MemoryLevel } from 'memory-level'
import { describe, expect, it } from 'vitest'
import * as main from '../../src/index.js'
import { PriceStore, type PriceRecord } from '../../src/index.js'
import {
  TEST_LIMITS, TEST_PROVIDER, compareRecords, dataSetArb, outcomeOf, queryParamsArb, referenceQuery, showParams, storedRecords, timestampArb,
} from '../../src/testing/index.js'

describe('price-store/testing', () => {
  it('a host property-tests its integration against the model: a PriceStore in memory here', async () => {
    // docs:integration
    const config = { provider: TEST_PROVIDER, limits: TEST_LIMITS }
    const cases = dataSetArb.chain((data) => fc.tuple(fc.constant(data), fc.array(queryParamsArb(data), { minLength: 1, maxLength: 5 })))
    await fc.assert(
      fc.asyncProperty(cases, async ([data, queries]) => {
        const store = await PriceStore.open(new MemoryLevel(), config)
        try {
          await store.putMany(data.records)
          const stored = storedRecords(data.records, TEST_PROVIDER) // what the store must hold: the last write of a key wins
          for (const params of queries) {
            const answered = await outcomeOf(() => store.query(params)) // your code here: a proxy, a cache, a server in front
            expect(answered, showParams(params)).toEqual(referenceQuery(stored, params, config))
          }
        } finally {
          await store.close()
        }
      }),
      { numRuns: 60 },
    )
    // /docs:integration
  })

  it("a host checks its own interval sampling against the model's range form", () => {
    // docs:sampling
    /** Your own sampler: each epoch-aligned bucket's closing record, with its minute of the hour. */
    function closingPrices(records: readonly PriceRecord[], from: number, to: number, interval: number): PriceRecord[] {
      const buckets = new Map<number, PriceRecord>()
      const inRange = records.filter((r) => r.timestamp >= from && r.timestamp <= to).sort(compareRecords)
      for (const record of inRange) buckets.set(Math.floor(record.timestamp / interval), record)
      return [...buckets.values()].map((record) => ({ ...record, minutes: Math.floor(record.timestamp / 60_000) % 60 }))
    }

    const unlimited = { provider: TEST_PROVIDER, limits: { ...TEST_LIMITS, maxRangePoints: Number.MAX_SAFE_INTEGER } }
    const cases = dataSetArb.chain((data) => fc.tuple(fc.constant(data), timestampArb(data.interval), timestampArb(data.interval)))
    fc.assert(
      fc.property(cases, ([data, a, b]) => {
        const [from, to] = a <= b ? [a, b] : [b, a]
        const stored = storedRecords(data.records, TEST_PROVIDER)
        const symbol = data.symbols[0]!
        const params = { symbol, fromTimestamp: String(from), toTimestamp: String(to), interval: String(data.interval) }
        const mine = closingPrices(stored.filter((r) => r.symbol === symbol), from, to, data.interval)
        expect({ answer: mine }).toEqual(referenceQuery(stored, params, unlimited))
      }),
      { numRuns: 200 },
    )
    // /docs:sampling
  })

  it('stays out of the main entry', () => {
    for (const name of ['referenceQuery', 'dataSetArb', 'TEST_PROVIDER']) expect(name in main, name).toBe(false)
  })

  it('shares no code with the engine: the model and arbitraries import nothing from src/engine, src/store, src/keys or the adapters', async () => {
    const dir = new URL('../../src/testing/', import.meta.url)
    const files = (await readdir(dir, { recursive: true })).filter((file) => file.endsWith('.ts'))
    expect(files.length).toBeGreaterThan(5)
    for (const file of files) {
      const source = await readFile(new URL(file, dir), 'utf8')
      const imports = [...source.matchAll(/^(?:import|export)\b[^'"]*from '([^']+)'/gm)].map((match) => match[1]!)
      for (const path of imports) {
        if (!path.startsWith('.')) {
          expect(path, `${file} imports ${path}`).toMatch(/^(fast-check|node:crypto)$/)
          continue
        }
        // Relative imports stay inside src/testing, but for the plain types and the error class.
        const target = new URL(path, new URL(file, dir)).href
        const inside = target.startsWith(dir.href)
        const shared = ['types.js', 'errors.js'].some((name) => target === new URL(`../${name}`, dir).href)
        expect(inside || shared, `${file} imports ${path}`).toBe(true)
      }
    }
  })

  it('is the "./testing" export of package.json, types first, with fast-check an optional peer dependency', async () => {
    const pkg = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8'))
    expect(pkg.exports['./testing']).toEqual({
      import: { types: './dist/testing.d.ts', default: './dist/testing.js' },
      require: { types: './dist/testing.d.cts', default: './dist/testing.cjs' },
    })
    for (const format of ['import', 'require']) expect(Object.keys(pkg.exports['./testing'][format])[0]).toBe('types')
    expect(pkg.peerDependencies['fast-check']).toBeDefined()
    expect(pkg.peerDependenciesMeta['fast-check']).toEqual({ optional: true })
  })

  it('docs/testing.md shows the examples as run here', async () => {
    const docs = await readFile(new URL('../../docs/testing.md', import.meta.url), 'utf8')
    const source = await readFile(new URL(import.meta.url), 'utf8')
    const regions = [...source.matchAll(/^( *)\/\/ docs:([a-z-]+)\n([\s\S]*?)^ *\/\/ \/docs:\2\n/gm)]
    expect(regions.map((match) => match[2])).toEqual(['integration', 'sampling'])
    for (const [, indent, name, body] of regions) expect(docs, name).toContain(body!.replace(new RegExp(`^${indent}`, 'gm'), ''))
  })
})
