/**
 * The store's write queue: batches, seal turns and prune turns run one after
 * another, so index bookkeeping never races.
 */
export class WriteQueue {
  #tail: Promise<unknown> = Promise.resolve()

  /** Runs `task` after everything queued so far; a failure rejects the returned promise and does not stop the queue. */
  run<T>(task: () => Promise<T>): Promise<T> {
    const done = this.#tail.then(task)
    this.#tail = done.catch(() => {})
    return done
  }

  /** Settles once everything queued so far has run. */
  idle(): Promise<unknown> {
    return this.#tail
  }
}
