import { availableParallelism } from 'node:os'
import { configDefaults, defineConfig } from 'vitest/config'

/**
 * Fault scenarios only the slow set runs (`npm run test:slow`, vitest.slow.config.ts, run by CI after `npm test`):
 * each waits for NATS elections and reconnects for a minute or more. `npm test` keeps the other cluster faults (a
 * node killed or frozen, every NATS server killed, the stream's tail lost, ...). `node scripts/cluster-soak.mjs`
 * names them among its files and sets SOAK_LEDGER: then they run here too.
 */
export const SLOW_ONLY_FILES = ['test/cluster/faults-partition.test.ts', 'test/cluster/faults-nats.test.ts']

export default defineConfig({
  // Lets examples written for users (`import ... from 'price-store'`) run as tests. The subpath
  // comes first: an alias also matches the imports below its name ('price-store/...').
  resolve: {
    alias: {
      'price-store/http': new URL('./src/http.ts', import.meta.url).pathname,
      'price-store/cluster': new URL('./src/cluster.ts', import.meta.url).pathname,
      'price-store/engine': new URL('./src/engine.ts', import.meta.url).pathname,
      'price-store/trust': new URL('./src/trust.ts', import.meta.url).pathname,
      'price-store': new URL('./src/index.ts', import.meta.url).pathname,
    },
  },
  test: {
    include: ['test/**/*.test.ts'],
    exclude: [...configDefaults.exclude, ...(process.env['SOAK_LEDGER'] ? [] : SLOW_ONLY_FILES)],
    // fast-check draws from one fixed seed unless a property names its own (FC_SEED=N for others).
    setupFiles: ['test/support/fast-check-seed.ts'],
    // Store-backed property tests and e2e servers do real I/O on a shared 2-core machine.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // At least three files at once, even on two cores: the cluster, crash and process files spend most of their
    // time waiting for child processes (vitest's default, one worker per core but one, ran one file at a time here).
    maxWorkers: Math.max(availableParallelism() - 1, 3),
  },
})
