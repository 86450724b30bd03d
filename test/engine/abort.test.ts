/**
 * The pure engine's side of cancellation: with a signal, `executePlan` and
 * `streamBuckets` check it as each batch of a scan arrives, stop pulling
 * batches once it has aborted and close the scan they were reading.
 */
import { describe, expect, it } from 'vitest'
import { executePlan, planQuery, streamBuckets } from '../../src/engine.js'
import type { PriceQuery } from '../../src/index.js'
import type { ScanOptions, ScanRow, ScanSource } from '../../src/engine.js'
import { T0, TEST_PROVIDER, makeRecord } from '../../src/testing/records.js'
import { ArraySource } from '../support/array-source.js'
import { rejectsCode } from '../support/assertions.js'

const BATCHES = 10
const BATCH = 4
const records = Array.from({ length: BATCHES * BATCH }, (_, i) => ({
  ...makeRecord({ timestamp: T0 + i * 1000 }),
  providerPublicKey: TEST_PROVIDER.publicKey,
}))

/** An ArraySource that aborts `controller` once it has yielded `abortAfter` batches, and reports how far it was read. */
class AbortingSource implements ScanSource {
  readonly #inner = new ArraySource(records, { batchSize: BATCH })
  readonly #controller: AbortController
  readonly #abortAfter: number
  pulled = 0
  closed = false

  constructor(controller: AbortController, abortAfter: number) {
    this.#controller = controller
    this.#abortAfter = abortAfter
  }

  async *scan(symbol: string, options: ScanOptions): AsyncGenerator<readonly ScanRow[]> {
    try {
      for await (const batch of this.#inner.scan(symbol, options)) {
        this.pulled++
        if (this.pulled === this.#abortAfter) this.#controller.abort()
        yield batch
      }
    } finally {
      this.closed = true
    }
  }

  symbols(): Promise<readonly string[]> {
    return this.#inner.symbols()
  }
}

const range: PriceQuery = { kind: 'range', symbol: 'BTC', from: T0, to: T0 + BATCHES * BATCH * 1000, interval: 1000, origin: 0, offset: 0 }
const latest: PriceQuery = { kind: 'latest', symbol: 'BTC', limit: BATCHES * BATCH, offset: 0 }

describe('executePlan with a signal', () => {
  it.each([['range', range], ['latest', latest]])('%s: stops at the batch after the abort and closes the scan', async (_name, query) => {
    const controller = new AbortController()
    const source = new AbortingSource(controller, 2)
    await rejectsCode(executePlan(planQuery(query, 1e6), source, { signal: controller.signal }), 'PRICE_ABORTED')
    expect(source.pulled).toBe(2)
    expect(source.closed).toBe(true)
  })

  it('reads every batch when the signal does not abort', async () => {
    const source = new AbortingSource(new AbortController(), Number.POSITIVE_INFINITY)
    const answer = await executePlan(planQuery(range, 1e6), source, { signal: new AbortController().signal })
    expect(answer).toHaveLength(BATCHES * BATCH)
    expect(source.pulled).toBe(BATCHES)
  })
})

describe('streamBuckets with a signal', () => {
  it('yields nothing after the abort, though the batch in hand has more, and closes the scan', async () => {
    const controller = new AbortController()
    const source = new AbortingSource(controller, Number.POSITIVE_INFINITY)
    const seen: number[] = []
    const err = await rejectsCode(
      (async () => {
        for await (const item of streamBuckets(planQuery(range, 1e6), source, { signal: controller.signal })) {
          seen.push((item as { timestamp: number }).timestamp)
          controller.abort()
        }
      })(),
      'PRICE_ABORTED',
    )
    expect(err.details.parameter).toBe('signal')
    expect(seen).toEqual([T0])
    expect(source.pulled).toBe(1)
    expect(source.closed).toBe(true)
  })

  it('stops at the batch after an abort during a read', async () => {
    const controller = new AbortController()
    const source = new AbortingSource(controller, 2)
    const items = streamBuckets(planQuery(range, 1e6), source, { signal: controller.signal })
    await rejectsCode((async () => { for await (const _ of items); })(), 'PRICE_ABORTED')
    expect(source.pulled).toBe(2)
    expect(source.closed).toBe(true)
  })
})
