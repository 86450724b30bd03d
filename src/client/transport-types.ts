/*
 * What the client is given to reach nodes and to wait: the parts of the platform it uses, so a browser's and
 * Node's (with the ws package) both fit, and a test gives fakes.
 */

/** The part of the WebSocket API the client uses: the browser's, and the `ws` package's in Node. */
export interface WebSocketLike {
  readonly readyState: number
  send(data: string): void
  close(code?: number, reason?: string): void
  // `any` events: each implementation has its own event classes (the DOM's, ws's); the session reads `data`, `code`
  // and `reason` only, and checks them.
  onopen: ((event: any) => void) | null
  onmessage: ((event: any) => void) | null
  onclose: ((event: any) => void) | null
  onerror: ((event: any) => void) | null
}

/** A WebSocket class: `globalThis.WebSocket`, or `WebSocket` of the `ws` package. */
export type WebSocketConstructor = new (url: string) => WebSocketLike

/** The timers the client waits with: the global ones unless a test gives its own clock. */
export interface ClientTimers {
  setTimeout(callback: () => void, ms: number): unknown
  clearTimeout(handle: unknown): void
}
