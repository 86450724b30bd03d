import type { CliIo } from './io.js'

/**
 * Listens for the shutdown signal (Ctrl+C) while a long command runs, so
 * the command can stop at a clean point rather than be killed half way.
 * A second signal still ends the process at once (see `processIo`).
 */
export class Interrupt {
  /** The signal's name once one came (`SIGINT`, `SIGTERM`). */
  signal: string | undefined
  readonly #stopped: Promise<void>
  readonly #unsubscribe: () => void
  readonly #controller = new AbortController()

  constructor(io: CliIo) {
    let resolve!: () => void
    this.#stopped = new Promise((done) => (resolve = done))
    this.#unsubscribe = io.onShutdown((name) => {
      this.signal = name
      this.#controller.abort(new Error(`interrupted by ${name}`))
      resolve()
      this.#controller.abort(new Error(`received ${name}`))
    })
  }

  /** Aborts when the signal comes: for library calls that take an `AbortSignal` (a backup; a prune stops between two steps). */
  get abortSignal(): AbortSignal {
    return this.#controller.signal
  }

  /** The exit code for the signal, as a shell reports a process it ended: 128 + its number. */
  get exitCode(): number {
    return this.signal === 'SIGTERM' ? 143 : 130
  }

  /**
   * Yields from `source` until it ends or a signal comes. A signal that
   * comes while the consumer handles a value (writes a batch) lets that
   * finish first; one that comes while `source` waits for input (a quiet
   * stdin) ends it at once, without waiting for the read.
   */
  async *until<T>(source: AsyncIterable<T>): AsyncGenerator<T, void, undefined> {
    const iterator = source[Symbol.asyncIterator]()
    let abandoned = false
    try {
      while (this.signal === undefined) {
        const pending = iterator.next()
        // Once abandoned, the read may still fail (its input destroyed): nobody is waiting for it then.
        pending.catch(() => {})
        const next = await Promise.race([pending, this.#stopped.then(() => undefined)])
        if (next === undefined) {
          abandoned = true
          return
        }
        if (next.done === true) return
        yield next.value
      }
    } finally {
      // A read still pending may never settle, so only a source at rest is closed and waited for.
      if (!abandoned) await iterator.return?.()
      else iterator.return?.().catch(() => {})
    }
  }

  /** Stops listening. */
  dispose(): void {
    this.#unsubscribe()
  }
}
