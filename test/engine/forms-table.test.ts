/**
 * The engine's table of query forms (src/engine/forms/index.ts): one form
 * per query kind, the only place the engine tells the kinds apart. The
 * answers themselves are checked by query-forms.test.ts and the property
 * models; this checks the table's own promises.
 */
import { describe, expect, it } from 'vitest'
import { DEFAULT_LIMITS, isPriceStoreError, type PriceQuery } from '../../src/index.js'
import { formOf } from '../../src/engine/answer-form.js'
import { streamBuckets } from '../../src/engine/execute.js'
import { FORMS } from '../../src/engine/forms/index.js'
import { parseQuery } from '../../src/engine/parse-query.js'
import { planQuery } from '../../src/engine/plan.js'
import type { ScanSource } from '../../src/engine/scan-source.js'
import { TEST_PROVIDER } from '../../src/testing/records.js'

const config = { provider: TEST_PROVIDER, limits: DEFAULT_LIMITS }
const parse = (params: string): PriceQuery => parseQuery(new URLSearchParams(params), config)
const window = 'fromTimestamp=1000&toTimestamp=5000'

/** One query of each form, and of each option that changes what a form reads. */
const QUERIES: Record<string, PriceQuery> = {
  latest: parse('symbol=BTC&limit=3'),
  history: parse(`symbol=BTC&${window}`),
  asOf: parse('symbol=BTC&toTimestamp=5000&direction=nearest&tolerance=10'),
  several: parse('symbols=BTC,ETH'),
  severalAsOf: parse('symbols=BTC,ETH&toTimestamp=5000&direction=after'),
  range: parse(`symbol=BTC&${window}&interval=1000`),
  filled: parse(`symbol=BTC&${window}&interval=1000&fill=prev`),
  candles: parse(`symbol=BTC&${window}&interval=1000&aggregate=candles`),
  twap: parse(`symbols=BTC&${window}&aggregate=twap`),
  cross: parse('quote=ETH&base=BTC&toTimestamp=5000'),
  crossRange: parse(`quote=ETH&base=BTC&${window}&interval=1000`),
  crossCandles: parse(`quote=ETH&base=BTC&${window}&interval=1000&aggregate=candles`),
  crossTwap: parse(`quote=ETH&base=BTC&${window}&aggregate=twap`),
}

const EMPTY: ScanSource = {
  async *scan() {},
  symbols: async () => [],
}

describe('the FORMS table', () => {
  it('has one form per query kind, and no other', () => {
    expect(Object.keys(FORMS).sort()).toEqual(['candles', 'cross', 'crossCandles', 'crossRange', 'crossTwap', 'latest', 'range', 'several', 'twap'])
    expect(Object.isFrozen(FORMS)).toBe(true)
  })

  it('names each answer as TypedAnswer does: the kind, or "filled" for a range with gap fill', () => {
    const forms = Object.fromEntries(Object.entries(QUERIES).map(([name, query]) => [name, formOf(query)]))
    expect(forms).toEqual({
      latest: 'latest', history: 'latest', asOf: 'latest', several: 'several', severalAsOf: 'several',
      range: 'range', filled: 'filled', candles: 'candles', twap: 'twap',
      cross: 'cross', crossRange: 'crossRange', crossCandles: 'crossCandles', crossTwap: 'crossTwap',
    })
  })

  it('makes frozen plans whose reads are frozen too', () => {
    for (const query of Object.values(QUERIES)) {
      const plan = planQuery(query, 10_000)
      expect(Object.isFrozen(plan)).toBe(true)
      expect(Object.isFrozen(plan.reads)).toBe(true)
      for (const read of plan.reads) expect(Object.isFrozen(read)).toBe(true)
    }
  })

  it('shares the reads of the newest-N plans with no window', () => {
    expect(planQuery(parse('symbol=BTC&limit=3'), 1).reads).toBe(planQuery(parse('symbol=ETH&limit=3'), 1).reads)
    expect(planQuery(parse('symbols=BTC'), 1).reads).toBe(planQuery(parse('symbol=ETH'), 1).reads)
  })

  it('streams only the bucketed forms: another plan is refused on the first pull', async () => {
    for (const name of ['range', 'filled', 'candles']) {
      const items = []
      for await (const item of streamBuckets(planQuery(QUERIES[name]!, 10_000), EMPTY)) items.push(item)
      expect(items).toEqual([])
    }
    const stream = streamBuckets(planQuery(QUERIES.latest!, 10_000), EMPTY)
    const refused = await stream.next().then(() => undefined, (err: unknown) => err)
    expect(isPriceStoreError(refused) && refused.code).toBe('PRICE_INVALID_QUERY')
  })
})
