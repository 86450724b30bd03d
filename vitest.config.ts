import { defineConfig } from 'vitest/config'

export default defineConfig({
  // Lets examples written for users (`import ... from 'price-store'`) run as tests.
  resolve: { alias: { 'price-store': new URL('./src/index.ts', import.meta.url).pathname } },
  test: {
    include: ['test/**/*.test.ts'],
    // Store-backed property tests and e2e servers do real I/O on a shared 2-core machine.
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
})
