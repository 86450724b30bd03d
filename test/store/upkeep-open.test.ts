/**
 * The seal turn a store queues as it opens (the hours a crash left in the
 * log) waits for the next turn of the event loop, so `open()` resolves and
 * its caller's first steps run before a seal step holds the thread (issue
 * 20's reopen after `kill -9`); so does the turn queued after a batch, so
 * its writer goes on first. Ordered by the event loop alone: microtasks
 * all run before a setImmediate callback, whatever the machine's speed.
 */
import { describe, expect, it } from 'vitest'
import type { StoreLife } from '../../src/store/lifecycle/store-life.js'
import type { Pruner } from '../../src/store/upkeep/pruner.js'
import type { Sealer } from '../../src/store/upkeep/sealer.js'
import { Upkeep } from '../../src/store/upkeep/upkeep.js'
import { WriteQueue } from '../../src/store/write/write-queue.js'

function upkeepWith(events: string[], dueTurns: number): { upkeep: Upkeep; queue: WriteQueue } {
  let left = dueTurns
  const sealer = {
    runDue: async () => {
      events.push('seal')
      left--
      return left > 0
    },
  } as unknown as Sealer
  const queue = new WriteQueue()
  const upkeep = new Upkeep({ life: { status: 'open' } as StoreLife, queue, sealer, pruner: {} as Pruner })
  return { upkeep, queue }
}

/** Lets `turns` rounds of microtasks run (no macrotask can run meanwhile). */
async function microtasks(turns: number): Promise<void> {
  for (let i = 0; i < turns; i++) await Promise.resolve()
}

describe('the seal turn queued at open', () => {
  it('starts after the opener has gone on, then seals every due hour', async () => {
    const events: string[] = []
    const { upkeep, queue } = upkeepWith(events, 3)
    upkeep.start(undefined, 0)
    await microtasks(100)
    events.push('opener')
    await queue.idle()
    // idle() resolves when the queue is empty; the turns re-queue themselves until runDue says no more is due.
    for (let i = 0; i < 10 && events.filter((e) => e === 'seal').length < 3; i++) await queue.idle()
    expect(events).toEqual(['opener', 'seal', 'seal', 'seal'])
  })

  it('a turn queued after a batch lets the writer go on first (its next batch on its way to be verified), then seals', async () => {
    const events: string[] = []
    const { upkeep, queue } = upkeepWith(events, 1)
    upkeep.enqueueSeal()
    await microtasks(100)
    events.push('writer')
    await queue.idle()
    expect(events).toEqual(['writer', 'seal'])
  })
})
