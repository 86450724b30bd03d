import { performance } from 'node:perf_hooks'
import type { CliIo } from './io.js'

const REDRAW_MS = 200

/** What a {@link Progress} knows of the work ahead. */
export interface ProgressOptions {
  /** Records expected in all (the demo knows); shown as "N of TOTAL", and gives the fraction done. */
  readonly total?: number
  /**
   * The fraction of the work done, from 0 to 1, when something other than
   * the record count tells it (bytes of the input files read); `undefined`
   * while unknown (standard input).
   */
  readonly fractionDone?: () => number | undefined
}

/**
 * Counts records written and, on a terminal, redraws one status line in
 * place on stderr: count, records/s and, when the size of the work is known,
 * percent done and time left. Off a terminal it stays silent, so logs get
 * only the caller's one-line summary.
 */
export class Progress {
  readonly #io: CliIo
  readonly #label: string
  readonly #total: number | undefined
  readonly #fractionDone: () => number | undefined
  readonly #started = performance.now()
  #count = 0
  #drawnAt = Number.NEGATIVE_INFINITY
  #drawn = false

  constructor(io: CliIo, label: string, options: ProgressOptions = {}) {
    this.#io = io
    this.#label = label
    this.#total = options.total
    const { total } = options
    this.#fractionDone = options.fractionDone ?? (total === undefined || total === 0 ? () => undefined : () => this.#count / total)
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
    const elapsed = now - this.#started
    const counted = this.#total === undefined ? countOf(this.#count, 'record') : `${formatCount(this.#count)} of ${countOf(this.#total, 'record')}`
    // \r and "erase line": the status is redrawn over itself.
    this.#io.stderr.write(`\r\x1b[2K${this.#label}: ${counted}, ${formatRate(this.#count, elapsed)}${timeLeft(this.#fractionDone(), elapsed)}`)
  }

  /** Writes a line of its own (a skipped record) above the status line, which the next {@link add} draws again. */
  note(line: string): void {
    this.#erase()
    this.#drawnAt = Number.NEGATIVE_INFINITY
    this.#io.stderr.write(`${line}\n`)
  }

  /** Erases the status line; returns the count and the elapsed time for a summary. */
  finish(): { count: number; seconds: number; rate: string } {
    this.#erase()
    const elapsed = performance.now() - this.#started
    return { count: this.#count, seconds: elapsed / 1000, rate: formatRate(this.#count, elapsed) }
  }

  #erase(): void {
    if (this.#drawn) this.#io.stderr.write('\r\x1b[2K')
    this.#drawn = false
  }
}

/** `1234567` -> `1,234,567`. */
export function formatCount(n: number): string {
  return n.toLocaleString('en-US')
}

/** A count and its noun, singular for exactly one: `1 record`, `0 records`, `1,234 records`. `plural` defaults to noun + "s". */
export function countOf(n: number, noun: string, plural = `${noun}s`): string {
  return `${formatCount(n)} ${n === 1 ? noun : plural}`
}

function formatRate(count: number, elapsedMs: number): string {
  if (elapsedMs <= 0) return '- records/s'
  return `${formatCount(Math.round((count * 1000) / elapsedMs))} records/s`
}

/** `, 42 %, 1 min 5 s left` at the pace so far; nothing while the fraction done is unknown or still zero. */
function timeLeft(fraction: number | undefined, elapsedMs: number): string {
  if (fraction === undefined || !(fraction > 0)) return ''
  const done = Math.min(1, fraction)
  const seconds = Math.round((elapsedMs * (1 - done)) / done / 1000)
  const left = seconds < 60 ? `${seconds} s` : seconds < 3600 ? `${Math.floor(seconds / 60)} min ${seconds % 60} s` : `${Math.floor(seconds / 3600)} h ${Math.floor((seconds % 3600) / 60)} min`
  return `, ${Math.floor(done * 100)} %, ${left} left`
}
