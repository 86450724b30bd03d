import { performance } from 'node:perf_hooks'
import type { CliIo } from './io.js'

const REDRAW_MS = 200

/**
 * Counts records written and, on a terminal, redraws one status line in
 * place on stderr (count and records/s). Off a terminal it stays silent, so
 * logs get only the caller's one-line summary.
 */
export class Progress {
  readonly #io: CliIo
  readonly #label: string
  readonly #total: number | undefined
  readonly #started = performance.now()
  #count = 0
  #drawnAt = Number.NEGATIVE_INFINITY
  #drawn = false

  constructor(io: CliIo, label: string, total?: number) {
    this.#io = io
    this.#label = label
    this.#total = total
  }

  /** Records written so far. */
  get count(): number {
    return this.#count
  }

  /** Adds `n` written records and redraws if it is time to. */
  add(n: number): void {
    this.#count += n
    if (!this.#io.isTTY) return
    const now = performance.now()
    if (now - this.#drawnAt < REDRAW_MS) return
    this.#drawnAt = now
    this.#drawn = true
    const total = this.#total === undefined ? '' : ` of ${formatCount(this.#total)}`
    // \r and "erase line": the status is redrawn over itself.
    this.#io.stderr.write(`\r\x1b[2K${this.#label}: ${formatCount(this.#count)}${total} records, ${formatRate(this.#count, now - this.#started)}`)
  }

  /** Erases the status line; returns the count and the elapsed time for a summary. */
  finish(): { count: number; seconds: number; rate: string } {
    if (this.#drawn) this.#io.stderr.write('\r\x1b[2K')
    const elapsed = performance.now() - this.#started
    return { count: this.#count, seconds: elapsed / 1000, rate: formatRate(this.#count, elapsed) }
  }
}

/** `1234567` -> `1,234,567`. */
export function formatCount(n: number): string {
  return n.toLocaleString('en-US')
}

function formatRate(count: number, elapsedMs: number): string {
  if (elapsedMs <= 0) return '- records/s'
  return `${formatCount(Math.round((count * 1000) / elapsedMs))} records/s`
}
