import type { ClientTimers, WebSocketConstructor, WebSocketLike } from './transport-types.js'

/** What a {@link WsSession} hands out, in order: the server's messages, then once its end. */
export type SessionEvent =
  | { readonly kind: 'message'; readonly message: Readonly<Record<string, unknown>> }
  | { readonly kind: 'bad'; readonly text: string }
  | { readonly kind: 'closed'; readonly code: number; readonly reason: string }
  | { readonly kind: 'timeout' }

/**
 * One WebSocket to one node's `/ws`: sends `first` once open, and queues what arrives, so a reader takes the
 * messages one by one, in order, at its own pace. After the connection ended, every read answers `closed`.
 */
export class WsSession {
  readonly #socket: WebSocketLike
  readonly #queue: SessionEvent[] = []
  #closed: SessionEvent | undefined
  #wake: (() => void) | undefined
  readonly #decoder = new TextDecoder()

  constructor(WebSocket: WebSocketConstructor, url: string, first: string) {
    this.#socket = new WebSocket(url)
    this.#socket.onopen = () => this.#socket.send(first)
    this.#socket.onmessage = (event: { readonly data?: unknown }) => this.#onMessage(event.data)
    this.#socket.onclose = (event: { readonly code?: unknown; readonly reason?: unknown }) =>
      this.#end(typeof event.code === 'number' ? event.code : 1006, typeof event.reason === 'string' ? event.reason : '')
    // A failed handshake or a lost connection: `close` follows with its code (1006), which is what is told.
    this.#socket.onerror = () => {}
  }

  /** The next event; `timeout` when none came within `ms` (the session stays usable). */
  async next(timers?: ClientTimers, ms?: number): Promise<SessionEvent> {
    for (;;) {
      const event = this.#queue.shift()
      if (event !== undefined) return event
      if (this.#closed !== undefined) return this.#closed
      const woken = new Promise<boolean>((resolve) => {
        const handle = timers === undefined || ms === undefined ? undefined : timers.setTimeout(() => resolve(false), ms)
        this.#wake = () => {
          if (handle !== undefined) timers!.clearTimeout(handle)
          resolve(true)
        }
      })
      if (!(await woken)) {
        this.#wake = undefined
        return { kind: 'timeout' }
      }
    }
  }

  /** Closes the connection (1000); reads answer `closed` at once. */
  close(reason = 'done'): void {
    try {
      this.#socket.close(1000, reason)
    } catch {
      // Closing a socket that is still connecting throws in some implementations; it is abandoned either way.
    }
    this.#end(1000, reason)
  }

  #onMessage(data: unknown): void {
    const text = typeof data === 'string' ? data : data instanceof ArrayBuffer || ArrayBuffer.isView(data) ? this.#decoder.decode(data as ArrayBuffer) : String(data)
    let parsed: unknown
    try {
      parsed = JSON.parse(text)
    } catch {
      parsed = undefined
    }
    const ok = typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
    this.#push(ok ? { kind: 'message', message: parsed as Record<string, unknown> } : { kind: 'bad', text: text.slice(0, 80) })
  }

  #end(code: number, reason: string): void {
    if (this.#closed !== undefined) return
    this.#closed = { kind: 'closed', code, reason }
    this.#socket.onmessage = null
    this.#wakeReader()
  }

  #push(event: SessionEvent): void {
    if (this.#closed !== undefined) return
    this.#queue.push(event)
    this.#wakeReader()
  }

  #wakeReader(): void {
    const wake = this.#wake
    this.#wake = undefined
    wake?.()
  }
}
