import { configDefaults, defineConfig } from 'vitest/config'
import base, { SLOW_ONLY_FILES } from './vitest.config.js'

/**
 * The slow set: `npm run test:slow`, run by CI after `npm test` (.ci/run). The fault scenarios `npm test` leaves
 * out (SLOW_ONLY_FILES in vitest.config.ts), and the files below: they run small in `npm test` (fewer trials,
 * kill cycles or property runs) and here at their full count, PRICE_STORE_FULL_RUNS=1 (test/support/full-runs.ts).
 * Every case of theirs runs in both; here, as many times as before the split.
 */
export const FULL_COUNT_FILES = [
  'test/reliability/crash.test.ts',
  'test/reliability/crash-adversarial.test.ts',
  'test/reliability/export-kill.test.ts',
  'test/property/store-model.prop.test.ts',
  'test/property/sealing.prop.test.ts',
  'test/property/signatures-store.prop.test.ts',
]

export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: [...SLOW_ONLY_FILES, ...FULL_COUNT_FILES],
    exclude: [...configDefaults.exclude],
    env: { PRICE_STORE_FULL_RUNS: '1' },
  },
})
