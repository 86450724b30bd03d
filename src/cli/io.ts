import type { Readable, Writable } from 'node:stream'

/**
 * Everything the CLI touches outside its arguments, so that a test can run a
 * command in-process with captured streams and a fake signal.
 */
export interface CliIo {
  readonly stdout: Writable
  readonly stderr: Writable
  /** Read by `import -`. */
  readonly stdin: Readable
  /** Whether stderr is a terminal: progress is drawn in place only then. */
  readonly isTTY: boolean
  /**
   * Calls `handler` once when the process is asked to stop (SIGINT or
   * SIGTERM in a real process). Returns a function that unregisters it.
   */
  onShutdown(handler: (signal: string) => void): () => void
}

/** The real process's streams and signals. */
export function processIo(): CliIo {
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    stdin: process.stdin,
    isTTY: process.stderr.isTTY === true,
    onShutdown(handler) {
      let asked = false
      const onSignal = (signal: NodeJS.Signals): void => {
        // A second Ctrl+C means "now": skip the graceful path.
        if (asked) {
          process.stderr.write(`received ${signal} again, exiting without waiting\n`)
          process.exit(130)
        }
        asked = true
        handler(signal)
      }
      process.on('SIGINT', onSignal)
      process.on('SIGTERM', onSignal)
      return () => {
        process.off('SIGINT', onSignal)
        process.off('SIGTERM', onSignal)
      }
    },
  }
}
