/**
 * Callers waiting for a node to apply a position (read-your-writes: a write
 * waiting for its own commit, a read asking for "at least position P").
 * The applier calls {@link PositionWaiters.reached} after each commit.
 */

interface Waiter {
  readonly position: number
  readonly settle: (reached: boolean) => void
}

/** Promises that resolve when a position is applied, or not in time. */
export class PositionWaiters {
  #waiters: Waiter[] = []

  /**
   * Resolves `true` once `current()` reaches `position`, `false` after `timeoutMs` or when `signal` aborts.
   * @param current the position applied now
   */
  wait(position: number, current: number, timeoutMs: number, signal?: AbortSignal): Promise<boolean> {
    if (current >= position) return Promise.resolve(true)
    if (signal?.aborted === true || timeoutMs <= 0) return Promise.resolve(false)
    return new Promise((resolve) => {
      const timer = setTimeout(() => settle(false), timeoutMs)
      const onAbort = (): void => settle(false)
      const waiter: Waiter = { position, settle: (reached) => settle(reached) }
      const settle = (reached: boolean): void => {
        clearTimeout(timer)
        signal?.removeEventListener('abort', onAbort)
        this.#waiters = this.#waiters.filter((other) => other !== waiter)
        resolve(reached)
      }
      signal?.addEventListener('abort', onAbort, { once: true })
      this.#waiters.push(waiter)
    })
  }

  /** Settles every waiter whose position is at or below `position`. */
  reached(position: number): void {
    for (const waiter of this.#waiters.filter((each) => each.position <= position)) waiter.settle(true)
  }

  /** Settles every waiter with `false` (the node stops). */
  cancelAll(): void {
    for (const waiter of [...this.#waiters]) waiter.settle(false)
  }
}
