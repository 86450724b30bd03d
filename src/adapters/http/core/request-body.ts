import type { IncomingMessage } from 'node:http'

/** How {@link readRequestBody} ended. */
export type BodyRead =
  | { readonly kind: 'body'; readonly bytes: Buffer }
  /** More than `maxBytes` came (reading stopped there). */
  | { readonly kind: 'too-large' }
  /** The whole body did not come within `timeoutMs`. */
  | { readonly kind: 'timeout' }
  /** The client went away (or the connection broke) before the body ended. */
  | { readonly kind: 'aborted' }

/**
 * Reads a request's whole body, up to `maxBytes` and within `timeoutMs`.
 * Past either, it stops reading (the request is paused: the caller answers,
 * then drains or closes). Never rejects.
 */
export function readRequestBody(req: IncomingMessage, maxBytes: number, timeoutMs: number): Promise<BodyRead> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = []
    let received = 0
    const finish = (read: BodyRead): void => {
      clearTimeout(timer)
      req.off('data', onData)
      req.off('end', onEnd)
      req.off('close', onClose)
      req.off('error', onClose)
      if (read.kind !== 'body' && read.kind !== 'aborted') req.pause()
      resolve(read)
    }
    const onData = (chunk: Buffer): void => {
      received += chunk.length
      if (received > maxBytes) finish({ kind: 'too-large' })
      else chunks.push(chunk)
    }
    const onEnd = (): void => finish({ kind: 'body', bytes: Buffer.concat(chunks, received) })
    // 'close' before 'end': the client left mid-body.
    const onClose = (): void => finish({ kind: 'aborted' })
    const timer = setTimeout(() => finish({ kind: 'timeout' }), timeoutMs)
    req.on('data', onData)
    req.on('end', onEnd)
    req.on('close', onClose)
    req.on('error', onClose)
  })
}

/** Bytes of a refused body read and thrown away, so that its answer reaches a client still sending, before the connection is cut. */
export const DRAIN_BYTES = 1024 * 1024
/** How long a refused body is drained before the connection is cut (ms). */
export const DRAIN_MS = 2_000

/**
 * Throws away the rest of a refused request's body, so the connection can
 * carry the next request, up to {@link DRAIN_BYTES} and {@link DRAIN_MS};
 * past either, the connection is closed. Nothing is kept: a refused body is
 * never buffered. Closing at once instead would make the kernel reset the
 * connection over unread bytes, and the client could lose the answer.
 */
export function drainRequest(req: IncomingMessage): void {
  if (req.complete || req.destroyed) return
  let drained = 0
  const cut = (): void => {
    clearTimeout(timer)
    req.socket.destroy()
  }
  const timer = setTimeout(cut, DRAIN_MS)
  timer.unref()
  req.on('data', (chunk: Buffer) => {
    drained += chunk.length
    if (drained > DRAIN_BYTES) cut()
  })
  req.once('end', () => clearTimeout(timer))
  req.once('close', () => clearTimeout(timer))
  req.resume()
}
