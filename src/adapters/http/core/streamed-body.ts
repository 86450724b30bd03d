import type { ServerResponse } from 'node:http'
import type { Writable } from 'node:stream'
import { varyOnEncoding, type AnswerCompression } from './compression.js'

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
  /** Compresses the body as it streams, in the coding the request accepts (none: sent as it is). */
  readonly compression?: AnswerCompression | undefined
}

/**
 * Sends the status and headers of a streamed answer (no `content-length`)
 * and gives where its body is to be written: the response itself, or, when
 * `compression` is given and the request accepts a coding, a compressing
 * stream piped into it (`content-encoding` set). With `compression`, the
 * answer says `vary: Accept-Encoding` whatever the coding. A streamed body
 * is compressed whatever its size (it is not known in advance). The
 * compressor keeps the response's backpressure: it stops taking input
 * while the response is full, so a writer waiting for the sink's `drain`
 * waits for the client. It goes when the response closes; its failure
 * (never expected) is reported and cuts the connection. For HEAD, the
 * headers GET would send and no body: use {@link sendStreamedHead}.
 */
export function openStreamedBody(
  res: ServerResponse, status: number, headers: Readonly<Record<string, string>>, compression: AnswerCompression | undefined, onError: (err: unknown) => void,
): Writable {
  if (compression === undefined) {
    res.writeHead(status, headers)
    return res
  }
  const { coding } = compression.negotiate(res.req)
  const negotiatedHeaders = varyOnEncoding(res, headers)
  if (coding === 'identity') {
    res.writeHead(status, negotiatedHeaders)
    return res
  }
  negotiatedHeaders['content-encoding'] = coding
  res.writeHead(status, negotiatedHeaders)
  const compressor = compression.stream(coding)
  compressor.on('error', (err) => {
    onError(err)
    res.destroy()
  })
  res.once('close', () => compressor.destroy())
  compressor.pipe(res)
  return compressor
}

/** The status and headers a streamed answer would be sent with (see {@link openStreamedBody}), and no body: a HEAD's answer. */
export function sendStreamedHead(res: ServerResponse, status: number, headers: Readonly<Record<string, string>>, compression: AnswerCompression | undefined): void {
  if (res.destroyed || res.writableEnded) return
  if (compression === undefined) {
    res.writeHead(status, headers)
  } else {
    const { coding } = compression.negotiate(res.req)
    const negotiatedHeaders = varyOnEncoding(res, headers)
    if (coding !== 'identity') negotiatedHeaders['content-encoding'] = coding
    res.writeHead(status, negotiatedHeaders)
  }
  res.end()
}

/**
 * Sends a streamed answer: the status and headers (no `content-length`, so
 * Node sends it chunked; compressed as it streams when `options.compression`
 * and the request agree, see {@link openStreamedBody}), then one piece per turn of the event loop, so other
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
  if (head) {
    sendStreamedHead(res, status, headers, options.compression)
    body.end()
    return
  }
  const sink = openStreamedBody(res, status, headers, options.compression, options.onError)
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
    sink.off('drain', resume)
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
      sink.end()
      return finish()
    }
    sink.write(piece)
    if (sink.writableLength < MAX_QUEUED_CHARS) {
      setImmediate(step)
      return
    }
    sink.once('drain', resume)
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
 * `drain` (of `sink`, where the body is written: the response, or the
 * compressor piped into it) or the response's `close`. A client that reads nothing for `stallMs` gets
 * `onStall` first, which ends or cuts the response. For senders that take
 * their pieces from a source that must be awaited (exports, live streams).
 */
export function untilDrained(res: ServerResponse, stallMs: number, onStall: () => void, sink: Writable = res): DrainWait {
  let wake = (): void => {}
  const done = new Promise<void>((resolve) => {
    if (res.destroyed) return resolve() // closed already: no event will come
    const finish = (): void => {
      clearTimeout(stall)
      sink.off('drain', finish)
      res.off('close', finish)
      resolve()
    }
    const stall = setTimeout(() => {
      onStall()
      finish()
    }, stallMs)
    stall.unref()
    sink.once('drain', finish)
    res.once('close', finish)
    wake = finish
  })
  return { done, wake: () => wake() }
}
