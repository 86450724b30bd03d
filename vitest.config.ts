import { availableParallelism } from 'node:os'
import { defineConfig } from 'vitest/config'

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
