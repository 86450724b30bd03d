/**
 * A raw HTTP/1.1 exchange over node:net for the HTTP reliability tests: sends
 * bytes exactly as given and reads the server's first final answer, without
 * any client library smoothing over what the server does.
 */
import { connect } from 'node:net'
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib'

/** A parsed HTTP answer. */
export interface RawAnswer {
  readonly kind: 'answer'
  /** Interim (1xx) statuses seen before the final answer. */
  readonly interim: readonly number[]
  readonly statusLine: string
  readonly status: number
  /** Lower-case names; a repeated header keeps its last value. */
  readonly headers: Readonly<Record<string, string>>
  /** The body: `content-length` bytes after the head, their `content-encoding` undone, decoded as UTF-8 ('' for HEAD). */
  readonly body: string
  /** The body's length as sent, before its `content-encoding` is undone (what `content-length` counts). */
  readonly sentLength: number
  /** Bytes after the head that were received (may exceed the body when the server sent more). */
  readonly bodyBytes: number
}

/**
 * No whole final answer came: the connection ended, the time ran out, or
 * (`open`) what came satisfied the caller's `until` while the answer went
 * on, as a live stream does.
 */
export interface RawFailure {
  readonly kind: 'closed' | 'timeout' | 'open'
  /** Everything received, as latin1. */
  readonly received: string
  /** The socket error's code, if any (ECONNRESET, EPIPE, ...). */
  readonly error?: string
}

export interface ExchangeOptions {
  /** Half-close our side (send FIN) right after the request, as `nc -N` does. */
  readonly halfClose?: boolean
  /** The request was a HEAD the server can parse: the answer has no body. */
  readonly head?: boolean
  /** Give up after this long (ms): the server did not answer. Default 10 s. */
  readonly timeoutMs?: number
  /**
   * Stop reading once what was received (as latin1) satisfies this, even if
   * the answer is not whole: an answer that never ends (a live stream) is
   * then read up to what the caller checks, not to the timeout.
   */
  readonly until?: (received: string) => boolean
}

/**
 * Sends `request` on a new connection and resolves with the server's first
 * final answer, once its head and `content-length` bytes of body are in (or,
 * for an answer with `connection: close`, once the server closes). Never
 * rejects; the connection is destroyed afterwards.
 */
export function exchange(url: string, request: string | Buffer, options: ExchangeOptions = {}): Promise<RawAnswer | RawFailure> {
  const { hostname, port } = new URL(url)
  const { halfClose = false, head = false, timeoutMs = 10_000, until } = options
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname)
    const chunks: Buffer[] = []
    let error: string | undefined
    let settled = false
    const finish = (result: RawAnswer | RawFailure): void => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      socket.destroy()
      resolve(result)
    }
    const received = (): Buffer => Buffer.concat(chunks)
    const timer = setTimeout(() => finish({ kind: 'timeout', received: received().toString('latin1') }), timeoutMs)
    socket.on('connect', () => {
      socket.write(request)
      if (halfClose) socket.end()
    })
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk)
      const answer = parseAnswer(received(), head, false)
      if (answer !== undefined) finish(answer.answer)
      else if (until !== undefined && until(received().toString('latin1'))) finish({ kind: 'open', received: received().toString('latin1') })
    })
    socket.on('error', (err: Error & { code?: string }) => {
      error = err.code ?? err.message
    })
    socket.on('close', () => {
      const answer = parseAnswer(received(), head, true)
      if (answer !== undefined) finish(answer.answer)
      else finish(error === undefined ? { kind: 'closed', received: received().toString('latin1') } : { kind: 'closed', received: received().toString('latin1'), error })
    })
  })
}

const HEAD_END = Buffer.from('\r\n\r\n')

/** The first final answer in `bytes`, if complete, and the bytes it took; `closed`: nothing more will come. */
function parseAnswer(bytes: Buffer, head: boolean, closed: boolean): { answer: RawAnswer; consumed: number } | undefined {
  const interim: number[] = []
  let start = 0
  for (;;) {
    const end = bytes.indexOf(HEAD_END, start)
    if (end < 0) return undefined
    const [statusLine = '', ...lines] = bytes.subarray(start, end).toString('latin1').split('\r\n')
    const status = Number(/^HTTP\/1\.[01] (\d{3})(?: |$)/.exec(statusLine)?.[1] ?? Number.NaN)
    const headers: Record<string, string> = {}
    for (const line of lines) {
      const colon = line.indexOf(':')
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim()
    }
    const bodyStart = end + HEAD_END.length
    if (status >= 100 && status < 200) {
      interim.push(status)
      start = bodyStart
      continue
    }
    const rest = bytes.subarray(bodyStart)
    const length = Number(headers['content-length'] ?? Number.NaN)
    const closes = /\bclose\b/i.test(headers.connection ?? '')
    // An answer that closes its connection is read to the close, so a body
    // longer than announced would be seen.
    if (closes && !closed) return undefined
    let sent: Buffer = Buffer.alloc(0)
    let consumed = bodyStart
    // A HEAD answer has no body, unless it is a raw error answer the server
    // sent because it could not parse the request (then it closes).
    if (!head || (closes && rest.length > 0)) {
      const chunked = /\bchunked\b/i.test(headers['transfer-encoding'] ?? '') ? dechunk(rest) : undefined
      if (chunked !== undefined) {
        // A chunked answer is whole at its last (empty) chunk: the connection may stay open after it.
        sent = chunked.body
        consumed = bodyStart + chunked.consumed
      } else if (!Number.isSafeInteger(length)) {
        if (!closed) return undefined
        sent = rest
        consumed = bytes.length
      } else {
        if (rest.length < length && !closed) return undefined
        sent = rest.subarray(0, length)
        consumed = bodyStart + Math.min(length, rest.length)
      }
    }
    const body = decoded(sent, headers['content-encoding']).toString('utf8')
    return { answer: { kind: 'answer', interim, statusLine, status, headers, body, sentLength: sent.length, bodyBytes: rest.length }, consumed }
  }
}

/** `body` with its `content-encoding` (gzip, br or deflate) undone; the bytes as they are for any other. */
function decoded(body: Buffer, encoding: string | undefined): Buffer {
  if (body.length === 0) return body
  if (encoding === 'gzip') return gunzipSync(body)
  if (encoding === 'br') return brotliDecompressSync(body)
  if (encoding === 'deflate') return inflateSync(body)
  return body
}

/**
 * The body of a whole chunked answer and the bytes it took, or `undefined`
 * while its last chunk has not come (or the framing is not valid chunked
 * encoding: then the answer is read as before, to the close).
 */
function dechunk(bytes: Buffer): { body: Buffer; consumed: number } | undefined {
  const parts: Buffer[] = []
  let at = 0
  for (;;) {
    const lineEnd = bytes.indexOf('\r\n', at)
    if (lineEnd < 0) return undefined
    const size = Number.parseInt(bytes.subarray(at, lineEnd).toString('latin1').split(';')[0] as string, 16)
    if (!Number.isSafeInteger(size) || size < 0) return undefined
    const dataStart = lineEnd + 2
    if (size === 0) {
      // No trailers are sent by the server: the empty line ends the answer.
      if (bytes.length < dataStart + 2) return undefined
      return bytes.subarray(dataStart, dataStart + 2).toString('latin1') === '\r\n' ? { body: Buffer.concat(parts), consumed: dataStart + 2 } : undefined
    }
    if (bytes.length < dataStart + size + 2) return undefined
    parts.push(bytes.subarray(dataStart, dataStart + size))
    at = dataStart + size + 2
  }
}

/** A kept-alive connection that sends requests one after another and reads their answers in order. */
export interface RawConnection {
  /** Sends `request` and resolves with its answer; rejects if the connection ends first. */
  request(request: string, options?: { head?: boolean }): Promise<RawAnswer>
  /** Sends bytes without waiting for anything (pipelining). */
  write(bytes: string): void
  /** Resolves with the next answer on the connection. */
  next(options?: { head?: boolean }): Promise<RawAnswer>
  /** Bytes received and not yet taken by an answer. */
  pending(): number
  /** Resolves once the server has closed the connection. */
  readonly closed: Promise<void>
  destroy(): void
}

/** Opens a raw connection (see {@link RawConnection}). */
export async function openConnection(url: string): Promise<RawConnection> {
  const { hostname, port } = new URL(url)
  const socket = connect(Number(port), hostname)
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve)
    socket.once('error', reject)
  })
  let buffer = Buffer.alloc(0)
  let ended = false
  let wake: (() => void) | undefined
  socket.on('data', (chunk: Buffer) => {
    buffer = Buffer.concat([buffer, chunk])
    wake?.()
  })
  socket.on('error', () => {})
  const closed = new Promise<void>((resolve) => {
    socket.on('close', () => {
      ended = true
      wake?.()
      resolve()
    })
  })
  const next = async (options: { head?: boolean } = {}): Promise<RawAnswer> => {
    for (;;) {
      const parsed = parseAnswer(buffer, options.head ?? false, ended)
      if (parsed !== undefined) {
        buffer = buffer.subarray(parsed.consumed)
        return parsed.answer
      }
      if (ended) throw new Error(`the connection closed before an answer; received ${JSON.stringify(buffer.toString('latin1'))}`)
      await new Promise<void>((resolve) => {
        wake = resolve
      })
      wake = undefined
    }
  }
  return {
    request(request, options) {
      socket.write(request)
      return next(options)
    },
    write(bytes) {
      socket.write(bytes)
    },
    next,
    pending: () => buffer.length,
    closed,
    destroy: () => socket.destroy(),
  }
}
