/**
 * The hot tails' test of whether a captured tail answers a read alone
 * (`TailView.canAnswer`), against its definition counted naively: the tail
 * holds the whole symbol, or starts before the window, or holds the
 * read's newest `limit` rows of the window (every row of it when not newest first).
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { QueryPlan } from '../../src/engine/query-plan.js'
import { HotTails } from '../../src/store/read/hot-tails.js'
import type { Row } from '../../src/store/rows/row.js'

interface Read {
  readonly from?: number
  readonly to?: number
  readonly reverse: boolean
  readonly limit?: number
}

/** The definition: which reads a tail of `rows` (newest first, of a symbol with more records when not `complete`) answers. */
function covers(rows: readonly number[], complete: boolean, read: Read): boolean {
  if (complete) return true
  const oldest = rows.at(-1)
  if (oldest !== undefined && read.from !== undefined && read.from > oldest) return true
  const inside = rows.filter((t) => (read.from === undefined || t >= read.from) && (read.to === undefined || t <= read.to)).length
  const needed = read.reverse ? read.limit ?? Number.POSITIVE_INFINITY : Number.POSITIVE_INFINITY
  return inside >= needed
}

// Few distinct times, so windows often end on a row's time and rows often tie.
const timeArb = fc.integer({ min: 0, max: 15 })
const readArb = fc.record({
  from: fc.option(timeArb, { nil: undefined, freq: 2 }),
  to: fc.option(timeArb, { nil: undefined, freq: 2 }),
  reverse: fc.boolean(),
  limit: fc.option(fc.integer({ min: 1, max: 8 }), { nil: undefined }),
}).map((read) => Object.fromEntries(Object.entries(read).filter(([, value]) => value !== undefined)) as unknown as Read)

describe('hot tails: canAnswer', () => {
  it('answers a read alone exactly when the definition says so, ties and gaps included (property)', () => {
    fc.assert(
      fc.property(fc.array(timeArb, { maxLength: 24 }), fc.integer({ min: 1, max: 10 }), fc.array(readArb, { minLength: 1, maxLength: 2 }), (times, perSymbol, reads) => {
        const ascending = [...times].sort((a, b) => a - b)
        const tails = new HotTails(perSymbol)
        // The tail keeps the newest `perSymbol` rows; loaded from a symbol of `times`, complete when it holds them all.
        const newest = ascending.slice(-perSymbol).reverse()
        tails.install('S', tails.version('S'), newest.map((timestamp) => ({ timestamp }) as Row))
        const view = tails.capture(['S'], { has: () => true })
        const complete = ascending.length < perSymbol
        expect(view?.canAnswer({ reads } as unknown as QueryPlan)).toBe(reads.every((read) => covers(newest, complete, read)))
      }),
      { numRuns: 3000 },
    )
  })
})

describe('hot tails: a captured view', () => {
  const rows = (...times: number[]): Row[] => times.map((timestamp) => ({ timestamp, id: `id-${timestamp}` }) as unknown as Row)
  const timesOf = (found: readonly Row[]): number[] => found.map((row) => row.timestamp)

  it('keeps the tails as they were when captured, whatever the writes, loads and prunes after it', () => {
    const tails = new HotTails(4)
    const known = { has: () => true }
    tails.install('A', tails.version('A'), rows(30, 20, 10))
    const before = tails.capture(['A'], known)
    tails.apply(new Map([['A', rows(40)]]), new Set())
    tails.install('B', tails.version('B'), rows(5))
    const afterWrite = tails.capture(['A', 'B'], known)
    tails.drop('A', 0, 25)
    const afterPrune = tails.capture(['A', 'B'], known)

    expect(timesOf(before?.scanNow('A', { reverse: true }) ?? [])).toEqual([30, 20, 10])
    expect(before?.scanNow('B', { reverse: true })).toEqual([])
    expect(timesOf(afterWrite?.scanNow('A', { reverse: true }) ?? [])).toEqual([40, 30, 20, 10])
    expect(timesOf(afterWrite?.scanNow('B', { reverse: true }) ?? [])).toEqual([5])
    expect(timesOf(afterPrune?.scanNow('A', { reverse: true }) ?? [])).toEqual([40, 30])
  })

  it('is not taken while a symbol with records has no tail loaded, and leaves out symbols without records', async () => {
    const tails = new HotTails(4)
    tails.install('A', tails.version('A'), rows(1))
    expect(tails.capture(['A', 'B'], { has: () => true })).toBeUndefined()
    const view = tails.capture(['A', 'B'], { has: (symbol) => symbol === 'A' })
    expect(await view?.symbols()).toEqual(['A'])
  })
})
