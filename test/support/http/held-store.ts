import { expect } from 'vitest'
import type { PricesQueryable } from '../../../src/adapters/http/prices/answer.js'
import { DEFAULT_LIMITS, type PriceAnswer } from '../../../src/index.js'
import { parseQuery, planQuery } from '../../../src/engine.js'
import { PROVIDER } from './demo-server.js'

/**
 * A store stub for the gate: it plans as a store does (so the gate reads
 * each query's cost), answers light queries at once with `[]`, and holds
 * every heavy one until the test calls its entry in `held`.
 */
export function heldStore(): { store: PricesQueryable; held: ((answer: PriceAnswer) => void)[]; heldCount(count: number): Promise<void> } {
  const held: ((answer: PriceAnswer) => void)[] = []
  const config = { provider: PROVIDER, limits: DEFAULT_LIMITS }
  const store: PricesQueryable = {
    plan: (params) => planQuery(parseQuery(params, config), DEFAULT_LIMITS.maxRangePoints),
    run: (plan) => (plan.heavy ? new Promise<PriceAnswer>((resolve) => held.push(resolve)) : Promise.resolve([])),
    query: () => Promise.reject(new Error('the handler runs plans')),
  }
  return {
    store,
    held,
    /** Resolves once `count` heavy queries have reached the store in all. */
    async heldCount(count: number): Promise<void> {
      for (let i = 0; i < 2_000 && held.length < count; i++) await new Promise((resolve) => setTimeout(resolve, 5))
      expect(held.length).toBeGreaterThanOrEqual(count)
    },
  }
}
