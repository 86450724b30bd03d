/**
 * Export then import gives an identical store (issue 11): random records
 * written in random batches into store A (sealing early or late, so hours
 * are sealed, open, or both), exported as NDJSON, imported into an empty
 * store B; then every symbol's contents, read back by exporting B, equal A's
 * export and the reference model's records (exact JSON, so a `-0` counts),
 * and the two stores' statistics agree with the model's counts. Half the
 * runs also back A up and check that the copy exports the same records.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { PriceStore } from '../../src/index.js'
import { toExactJson } from '../../src/http.js'
import type { NewPriceRecord, PriceRecord } from '../../src/index.js'
import { dataSetArb, splitBatches } from '../../src/testing/record-arbitraries.js'
import { TEST_PROVIDER } from '../../src/testing/records.js'
import { compareRecords, compareUtf8, storedRecords } from '../../src/testing/reference-model.js'
import { propertyBackends } from './backends.js'

const scale = Number(process.env['FC_SCALE']) || 1
const SHRINK_TIMEOUT = 300_000

const { backends: BACKENDS, newPath } = propertyBackends('export-prop', { memory: 40, classic: 15 })

/** The export as NDJSON text, as the CLI writes it. */
async function ndjsonOf(records: AsyncIterable<PriceRecord>): Promise<string[]> {
  const lines: string[] = []
  for await (const record of records) lines.push(toExactJson(record))
  return lines
}

const scenarioArb = dataSetArb.chain((data) =>
  fc.record({
    data: fc.constant(data),
    cuts: fc.array(fc.nat(), { maxLength: 4 }),
    importCuts: fc.array(fc.nat(), { maxLength: 3 }),
    // 0 seals every hour after each batch; a few KB seals the oldest early; the default waits for time to pass.
    openBytes: fc.constantFrom(0, 2_048, undefined),
    selection: fc.option(fc.subarray([...data.symbols]), { nil: undefined }),
    backup: fc.boolean(),
  }),
)

describe.each(BACKENDS)('export then import on $name', (backend) => {
  it('gives a store with every record of the first, exactly', async () => {
    await fc.assert(
      fc.asyncProperty(scenarioArb, async ({ data, cuts, importCuts, openBytes, selection, backup }) => {
        const a = await PriceStore.open(backend.location(), { provider: TEST_PROVIDER, ...(openBytes === undefined ? {} : { openBytes }) })
        const b = await PriceStore.open(backend.location(), { provider: TEST_PROVIDER })
        try {
          for (const batch of splitBatches(data.records, cuts)) await a.putMany(batch)
          const expected = storedRecords(data.records, TEST_PROVIDER)
            .sort((x, y) => compareUtf8(x.symbol, y.symbol) || compareRecords(x, y))
            .map((record) => toExactJson(record))

          const exported = await ndjsonOf(a.export())
          expect(exported).toEqual(expected)
          const parsed = exported.map((line) => JSON.parse(line) as NewPriceRecord)
          for (const batch of splitBatches(parsed, importCuts)) await b.putMany(batch)
          expect(await ndjsonOf(b.export())).toEqual(exported)

          const statsA = await a.stats()
          const statsB = await b.stats()
          expect(statsB.perSymbol).toEqual(statsA.perSymbol)
          expect(statsA.records).toBe(expected.length)

          if (backup) {
            const { location } = await a.backup(newPath('backup'))
            const copy = await PriceStore.open(location, { provider: TEST_PROVIDER })
            try {
              expect(await ndjsonOf(copy.export())).toEqual(expected)
              expect((await copy.stats()).perSymbol).toEqual(statsA.perSymbol)
            } finally {
              await copy.close()
            }
          }

          if (selection !== undefined) {
            const wanted = new Set(selection)
            expect(await ndjsonOf(b.export({ symbols: selection }))).toEqual(expected.filter((line) => wanted.has((JSON.parse(line) as PriceRecord).symbol)))
          }
        } finally {
          await a.close()
          await b.close()
        }
      }),
      { numRuns: Math.ceil(backend.numRuns * scale) },
    )
  }, SHRINK_TIMEOUT)
})
