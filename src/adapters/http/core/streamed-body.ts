import type { ServerResponse } from 'node:http'

/**
 * The body of a large `/prices` answer, sent as it is serialised: JSON
 * pieces of bounded size written with backpressure, so a slow reader holds
 * back its own answer, not the server's memory. Made by `answerPlanned`
 * when `streamAbove` allows; sent by {@link sendStreamed}.
 */
export class StreamedBody {
  /** How many records the answer holds. */
  readonly records: number
  readonly #pieces: Iterator<string, void, undefined>
  #ended = false
  readonly #onEnd: (() => void)[] = []
  #onFirstWait: (() => void) | undefined
  #waited = false

  constructor(records: number, pieces: Iterator<string, void, undefined>) {
    this.records = records
    this.#pieces = pieces
  }

  /** The next piece of JSON text, or `undefined` after the last. May throw (a stored record that does not decode). */
  next(): string | undefined {
    const step = this.#pieces.next()
    return step.done === true ? undefined : step.value
  }

  /** Runs `callback` once the body is sent, abandoned or failed (at once when that has happened). */
  onEnd(callback: () => void): void {
    if (this.#ended) callback()
    else this.#onEnd.push(callback)
  }

  /** Runs `callback` the first time the sender waits for the client to read (never after `end()`). */
  onFirstWait(callback: () => void): void {
    this.#onFirstWait = callback
  }

  /** Says the sender waits for the client to read what was sent. */
  waiting(): void {
    if (this.#waited || this.#ended) return
    this.#waited = true
    this.#onFirstWait?.()
  }

  /** Marks the body done with (sent, abandoned or failed): the `onEnd` callbacks run, once. */
  end(): void {
    if (this.#ended) return
    this.#ended = true
    for (const callback of this.#onEnd.splice(0)) callback()
  }
}

/** Default time a streamed answer may wait for a client to read what was sent before the connection is cut (ms). */
export const DEFAULT_SEND_STALL_MS = 30_000

/**
 * Characters of an answer queued in the response (not yet taken by the
 * kernel) past which no more is built until it drains: a few pieces, so a
 * fast client never waits for the next piece, and a slow one holds no more.
 */
export const MAX_QUEUED_CHARS = 256 * 1024

/**
 * How long the response must wait for its client before the answer counts
 * as waiting (its slot then goes to the next query): a client reading at
 * loopback speed drains the socket well within it.
 */
const WAITING_AFTER_MS = 20

/** How {@link sendStreamed} treats the connection. */
export interface StreamSendOptions {
  /** Time to wait for the client to read a full socket buffer before cutting the connection (ms). */
  readonly stallMs: number
  /** Called with an error that broke the answer once its status was sent (the connection is then cut). */
  readonly onError: (err: unknown) => void
}

/**
 * Sends a streamed answer: the status and headers (no `content-length`, so
 * Node sends it chunked), then one piece per turn of the event loop, so other
 * requests are answered in between. Once a few pieces are queued in the
 * response it waits for `drain` (the answer counts as waiting for its client
 * when that takes more than a moment); a client that reads nothing for
 * `stallMs` has its connection cut. A piece that cannot be built (a stored record that does
 * not decode) cuts the connection too: with the status already sent, that
 * is the only honest way to say the answer is incomplete. The body's
 * `end()` runs in every case, once.
 */
export function sendStreamed(
  res: ServerResponse, status: number, headers: Readonly<Record<string, string>>, body: StreamedBody, head: boolean, options: StreamSendOptions,
): void {
  if (res.destroyed || res.writableEnded) {
    body.end()
    return
  }
  res.writeHead(status, headers)
  if (head) {
    res.end()
    body.end()
    return
  }
  let stall: NodeJS.Timeout | undefined
  let waiting: NodeJS.Timeout | undefined
  const stopTimers = (): void => {
    if (stall !== undefined) clearTimeout(stall)
    if (waiting !== undefined) clearTimeout(waiting)
    stall = waiting = undefined
  }
  const finish = (): void => {
    stopTimers()
    res.off('close', finish)
    res.off('drain', resume)
    body.end()
  }
  const resume = (): void => {
    stopTimers()
    setImmediate(step)
  }
  const step = (): void => {
    if (res.destroyed) return finish()
    let piece: string | undefined
    try {
      piece = body.next()
    } catch (err) {
      options.onError(err)
      res.destroy()
      return finish()
    }
    if (piece === undefined) {
      res.end()
      return finish()
    }
    res.write(piece)
    if (res.writableLength < MAX_QUEUED_CHARS) {
      setImmediate(step)
      return
    }
    res.once('drain', resume)
    waiting = setTimeout(() => body.waiting(), WAITING_AFTER_MS)
    stall = setTimeout(() => res.destroy(), options.stallMs)
    waiting.unref()
    stall.unref()
  }
  res.once('close', finish)
  step()
}

/** A wait for a response to drain (see {@link untilDrained}). */
export interface DrainWait {
  /** Resolves once the response drains or closes, the stall time passes, or {@link DrainWait.wake} is called. */
  readonly done: Promise<void>
  /** Ends the wait at once (the response is being ended another way). */
  wake(): void
}

/**
 * Waits for a response whose client has a full buffer to read it: until
 * `drain` or `close`. A client that reads nothing for `stallMs` gets
 * `onStall` first, which ends or cuts the response. For senders that take
 * their pieces from a source that must be awaited (exports, live streams).
 */
export function untilDrained(res: ServerResponse, stallMs: number, onStall: () => void): DrainWait {
  let wake = (): void => {}
  const done = new Promise<void>((resolve) => {
    if (res.destroyed) return resolve() // closed already: no event will come
    const finish = (): void => {
      clearTimeout(stall)
      res.off('drain', finish)
      res.off('close', finish)
      resolve()
    }
    const stall = setTimeout(() => {
      onStall()
      finish()
    }, stallMs)
    stall.unref()
    res.once('drain', finish)
    res.once('close', finish)
    wake = finish
  })
  return { done, wake: () => wake() }
}
