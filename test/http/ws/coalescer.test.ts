/**
 * The `fixed_rate` coalescer and the message budget on a test clock: what
 * goes out, and when, decided by the clock the test moves, never by sleeps.
 */
import { describe, expect, it } from 'vitest'
import { Coalescer, type CoalescedUpdate, type CoalescerClock } from '../../../src/adapters/http/ws/coalescer.js'
import { MessageBudget } from '../../../src/adapters/http/ws/message-budget.js'
import { makeRecord } from '../../../src/testing/records.js'
import type { PriceRecord } from '../../../src/index.js'

/** A clock whose time moves only when the test says, running the timers due. */
class TestClock implements CoalescerClock {
  time = 1_000
  readonly #timers = new Map<number, { at: number; run: () => void }>()
  #next = 0

  now(): number {
    return this.time
  }

  setTimeout(run: () => void, ms: number): unknown {
    const id = ++this.#next
    this.#timers.set(id, { at: this.time + ms, run })
    return id
  }

  clearTimeout(timer: unknown): void {
    this.#timers.delete(timer as number)
  }

  get timers(): number {
    return this.#timers.size
  }

  advance(ms: number): void {
    const until = this.time + ms
    for (;;) {
      const due = [...this.#timers].filter(([, timer]) => timer.at <= until).sort(([, a], [, b]) => a.at - b.at)[0]
      if (due === undefined) break
      this.#timers.delete(due[0])
      this.time = due[1].at
      due[1].run()
    }
    this.time = until
  }
}

const record = (symbol: string, value: number): PriceRecord => makeRecord({ symbol, value, timestamp: 1_700_000_000_000 + value }) as unknown as PriceRecord

function setup(intervalMs = 200) {
  const clock = new TestClock()
  const out: (CoalescedUpdate & { at: number })[] = []
  const coalescer = new Coalescer(intervalMs, clock, (update) => out.push({ ...update, at: clock.now() }))
  const summary = () => out.map(({ at, position, records }) => [at, position, records.map((r) => `${r.symbol}=${r.value}`)])
  return { clock, coalescer, out, summary }
}

describe('Coalescer (fixed_rate)', () => {
  it('sends the first commit at once, then at most one update per interval with each symbol\'s newest record', () => {
    const { clock, coalescer, summary } = setup()
    coalescer.add(1, undefined, [record('BTC', 1)])
    expect(summary()).toEqual([[1_000, 1, ['BTC=1']]])
    clock.advance(50)
    coalescer.add(2, undefined, [record('BTC', 2), record('ETH', 1)])
    clock.advance(50)
    coalescer.add(3, 'tag3', [record('BTC', 3)])
    expect(summary()).toHaveLength(1) // held until the interval ends
    clock.advance(99)
    expect(summary()).toHaveLength(1)
    clock.advance(1)
    expect(summary()).toEqual([[1_000, 1, ['BTC=1']], [1_200, 3, ['ETH=1', 'BTC=3']]])
    expect(coalescer.pending).toBe(false)
  })

  it('keeps the newest commit\'s tag for the eventId, and waits out the interval after a flush', () => {
    const { clock, coalescer, out } = setup()
    coalescer.add(1, 'aaaaaaaa', [record('BTC', 1)])
    clock.advance(10)
    coalescer.add(2, 'bbbbbbbb', [record('BTC', 2)])
    clock.advance(190)
    expect(out.map((update) => update.commitTag)).toEqual(['aaaaaaaa', 'bbbbbbbb'])
    // Quiet for more than an interval: the next commit goes out at once.
    clock.advance(500)
    coalescer.add(3, undefined, [record('ETH', 3)])
    expect(out.at(-1)).toMatchObject({ at: 1_700, position: 3 })
  })

  it('a commit with no record moves the position on only while something waits', () => {
    const { clock, coalescer, summary } = setup()
    coalescer.add(5, undefined, [])
    expect(summary()).toEqual([])
    coalescer.add(6, undefined, [record('BTC', 6)])
    coalescer.add(7, undefined, [record('BTC', 7)])
    coalescer.add(9, undefined, [])
    clock.advance(200)
    expect(summary()).toEqual([[1_000, 6, ['BTC=6']], [1_200, 9, ['BTC=7']]])
  })

  it('flush() hands on what waits at once; close() drops it and stops the timer', () => {
    const { clock, coalescer, summary } = setup(1_000)
    coalescer.add(1, undefined, [record('BTC', 1)])
    coalescer.add(2, undefined, [record('BTC', 2)])
    coalescer.flush()
    expect(summary()).toEqual([[1_000, 1, ['BTC=1']], [1_000, 2, ['BTC=2']]])
    coalescer.add(3, undefined, [record('BTC', 3)])
    expect(clock.timers).toBe(1)
    coalescer.close()
    expect(clock.timers).toBe(0)
    clock.advance(5_000)
    coalescer.add(4, undefined, [record('BTC', 4)])
    expect(summary()).toHaveLength(2)
  })

  it('holds one record per symbol however many commits come within an interval', () => {
    const { clock, coalescer, out } = setup()
    coalescer.add(0, undefined, [record('X', 0)])
    for (let i = 1; i <= 10_000; i++) coalescer.add(i, undefined, [record(`S${i % 10}`, i)])
    clock.advance(200)
    expect(out).toHaveLength(2)
    expect(out[1]?.records.map((r) => `${r.symbol}=${r.value}`)).toEqual(Array.from({ length: 10 }, (_, k) => `S${(k + 1) % 10}=${9_991 + k}`))
  })
})

describe('MessageBudget', () => {
  it('lets a burst of rate messages through, refuses the next, and refills at rate a second', () => {
    let now = 0
    const budget = new MessageBudget(5, () => now)
    expect(Array.from({ length: 6 }, () => budget.take())).toEqual([true, true, true, true, true, false])
    now += 199
    expect(budget.take()).toBe(false)
    now += 1
    expect(budget.take()).toBe(true)
    now += 10_000
    expect(Array.from({ length: 6 }, () => budget.take())).toEqual([true, true, true, true, true, false])
  })
})
