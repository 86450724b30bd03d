/**
 * The abstract store suite (STYLE §4): one factory-driven set of cases per
 * feature, each file a {@link FeatureTests} function like abstract-level's
 * `test/*-test.js`, all run against every backend so they cannot drift apart
 * (test/store/classic-level.test.ts, test/store/memory-level.test.ts). Cases that need
 * real persistence are gated with `it.skipIf(!persistent)`. Expectations come
 * from what was written (the filter-and-sort model in model.ts, or the
 * reference model of `price-store/testing`), never from the store's output.
 */
import { describe } from 'vitest'
import { asOfTests } from './as-of.js'
import { askTests } from './ask.js'
import { backupTests } from './backup.js'
import { candlesTests } from './candles.js'
import type { StoreSuiteOptions } from './context.js'
import { countersTests } from './counters.js'
import { disposeTests } from './dispose.js'
import { exportTests } from './export.js'
import { fillTests } from './fill.js'
import { inputTests } from './input.js'
import { latestTests } from './latest.js'
import { lifecycleTests } from './lifecycle.js'
import { optionsTests } from './options.js'
import { persistenceTests } from './persistence.js'
import { pruneTests } from './prune.js'
import { putBatchTests } from './put-batch.js'
import { queryTests } from './query.js'
import { rangeTests } from './range.js'
import { severalTests } from './several.js'
import { statsTests } from './stats.js'
import { twapTests } from './twap.js'
import { watchTests } from './watch.js'
import { writingTests } from './writing.js'

export type { StoreSuiteOptions } from './context.js'

/** Every feature's cases, in one describe titled by the backend. */
const FEATURES = [
  lifecycleTests, optionsTests, writingTests, inputTests, putBatchTests, countersTests, latestTests, asOfTests, severalTests,
  rangeTests, fillTests, candlesTests, twapTests, queryTests, askTests, watchTests, pruneTests, exportTests, statsTests,
  backupTests, disposeTests, persistenceTests,
]

/** Runs the whole store suite on one backend. */
export function storeSuite(options: StoreSuiteOptions): void {
  describe(`PriceStore on ${options.name}`, () => {
    for (const features of FEATURES) features(options)
  })
}
