import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Store-backed property tests and e2e servers do real I/O on a shared 2-core machine.
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
})
