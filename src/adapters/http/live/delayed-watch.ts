import { MAX_TIMER_MS } from '../../../rules/options.js'
import type { WatchItem, WatchIterator } from '../../../store/services/watch/watch-options.js'

/** The time (ms since the epoch, as record timestamps) and timers a delayed watch waits on. */
export interface DelayClock {
  now(): number
  setTimeout(run: () => void, ms: number): unknown
  clearTimeout(timer: unknown): void
}

/** Node's clock; its timers do not hold the process open. */
export const SYSTEM_DELAY_CLOCK: DelayClock = {
  now: () => Date.now(),
  setTimeout: (run, ms) => setTimeout(run, ms).unref(),
  clearTimeout: (timer) => clearTimeout(timer as NodeJS.Timeout),
}

/**
 * `watch` as a reader delayed by `delayMs` sees it: each commit is handed on
 * once its newest record is `delayMs` old (at once when it is already), the
 * items after it waiting behind it, so positions stay in order and a client
 * resuming after any of them misses nothing. While an item waits, the watch
 * behind it keeps (and bounds) the commits that follow, as it does for a
 * client that reads slowly. `return()` ends a wait at once.
 */
export function delayedWatch(watch: WatchIterator, delayMs: number, clock: DelayClock = SYSTEM_DELAY_CLOCK): WatchIterator {
  if (delayMs <= 0) return watch
  let wake: (() => void) | undefined
  let timer: unknown
  let ended = false
  const sleep = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      wake = resolve
      timer = clock.setTimeout(resolve, Math.min(ms, MAX_TIMER_MS))
    })
  const delayed: WatchIterator = {
    next: async () => {
      const step = await watch.next()
      if (step.done === true || step.value.type !== 'records') return step
      const due = newest(step.value) + delayMs
      for (let wait = due - clock.now(); wait > 0 && !ended; wait = due - clock.now()) await sleep(wait)
      return ended ? { done: true, value: undefined } : step
    },
    return: () => {
      ended = true
      if (timer !== undefined) clock.clearTimeout(timer)
      wake?.()
      return watch.return()
    },
    [Symbol.asyncIterator]: () => delayed,
  }
  return delayed
}

/** The newest record's timestamp of a commit (its records, any order); `-Infinity` for none. */
function newest(item: Extract<WatchItem, { type: 'records' }>): number {
  let latest = Number.NEGATIVE_INFINITY
  for (const record of item.records) if (record.timestamp > latest) latest = record.timestamp
  return latest
}
