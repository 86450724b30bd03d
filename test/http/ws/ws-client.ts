/**
 * A `ws` client for the `/ws` tests: every message the server sends kept in
 * order as parsed JSON, taken one at a time, and how the connection closed.
 */
import { WebSocket, type ClientOptions } from 'ws'

export type ServerMessage = Record<string, unknown> & { readonly type: string }

export interface WsClient {
  readonly socket: WebSocket
  send(message: unknown): void
  /** The next message (rejects if the connection closes first). */
  next(): Promise<ServerMessage>
  /** Messages up to and including the first of `type`. */
  until(type: string): Promise<ServerMessage[]>
  /** How the connection closed: its code and reason. */
  readonly closed: Promise<{ code: number; reason: string }>
  close(): Promise<void>
}

/** Opens `url` (`ws://...`), resolving once the handshake is done. */
export async function connectWs(url: string, options: ClientOptions = {}): Promise<WsClient> {
  const socket = new WebSocket(url, options)
  const queue: ServerMessage[] = []
  let waiting: (() => void) | undefined
  let ended = false
  const closed = new Promise<{ code: number; reason: string }>((resolve) => {
    socket.on('close', (code, reason) => {
      ended = true
      waiting?.()
      resolve({ code, reason: reason.toString() })
    })
  })
  socket.on('message', (data) => {
    queue.push(JSON.parse(String(data)) as ServerMessage)
    waiting?.()
  })
  socket.on('error', () => {})
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve())
    socket.once('unexpected-response', (_req, res) => reject(new Error(`handshake answered ${res.statusCode}`)))
    socket.once('close', () => reject(new Error('closed before open')))
  })
  const next = async (): Promise<ServerMessage> => {
    for (;;) {
      const message = queue.shift()
      if (message !== undefined) return message
      if (ended) throw new Error('the connection closed')
      await new Promise<void>((resolve) => (waiting = resolve))
      waiting = undefined
    }
  }
  return {
    socket,
    send: (message) => socket.send(typeof message === 'string' ? message : JSON.stringify(message)),
    next,
    async until(type) {
      const seen: ServerMessage[] = []
      for (;;) {
        const message = await next()
        seen.push(message)
        if (message.type === type) return seen
      }
    },
    closed,
    async close() {
      if (socket.readyState === socket.CLOSED) return
      socket.close()
      await closed
    },
  }
}
