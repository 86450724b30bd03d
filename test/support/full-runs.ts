/**
 * Soak, scale and many-seed cases run small in `npm test` and at their full
 * count in the slow set (`npm run test:slow`, vitest.slow.config.ts, which
 * sets PRICE_STORE_FULL_RUNS=1; CI runs both, see .ci/run). A file that
 * takes a count from here runs the same checks either way: only how many
 * trials, cycles or runs it makes changes.
 */
export const FULL_RUNS = process.env['PRICE_STORE_FULL_RUNS'] === '1'

/** `quick` in `npm test`, `full` in the slow set. */
export function runs(quick: number, full: number): number {
  return FULL_RUNS ? full : quick
}
