/**
 * A raw HTTP/1.1 exchange over node:net for the HTTP reliability tests: sends
 * bytes exactly as given and reads the server's first final answer, without
 * any client library smoothing over what the server does.
 */
import { connect } from 'node:net'

/** A parsed HTTP answer. */
export interface RawAnswer {
  readonly kind: 'answer'
  /** Interim (1xx) statuses seen before the final answer. */
  readonly interim: readonly number[]
  readonly statusLine: string
  readonly status: number
  /** Lower-case names; a repeated header keeps its last value. */
  readonly headers: Readonly<Record<string, string>>
  /** The body: `content-length` bytes after the head, decoded as UTF-8 ('' for HEAD). */
  readonly body: string
  /** Bytes after the head that were received (may exceed the body when the server sent more). */
  readonly bodyBytes: number
}

/** The connection ended, or the time ran out, before a whole final answer came. */
export interface RawFailure {
  readonly kind: 'closed' | 'timeout'
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
}

/**
 * Sends `request` on a new connection and resolves with the server's first
 * final answer, once its head and `content-length` bytes of body are in (or,
 * for an answer with `connection: close`, once the server closes). Never
 * rejects; the connection is destroyed afterwards.
 */
export function exchange(url: string, request: string | Buffer, options: ExchangeOptions = {}): Promise<RawAnswer | RawFailure> {
  const { hostname, port } = new URL(url)
  const { halfClose = false, head = false, timeoutMs = 10_000 } = options
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
    let body = ''
    let consumed = bodyStart
    // A HEAD answer has no body, unless it is a raw error answer the server
    // sent because it could not parse the request (then it closes).
    if (!head || (closes && rest.length > 0)) {
      if (!Number.isSafeInteger(length)) {
        if (!closed) return undefined
        body = rest.toString('utf8')
        consumed = bytes.length
      } else {
        if (rest.length < length && !closed) return undefined
        body = rest.subarray(0, length).toString('utf8')
        consumed = bodyStart + Math.min(length, rest.length)
      }
    }
    return { answer: { kind: 'answer', interim, statusLine, status, headers, body, bodyBytes: rest.length }, consumed }
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
