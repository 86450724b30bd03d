/**
 * The text of Server-Sent Events (the WHATWG HTML standard, "Server-sent
 * events"): fields are `name: value` lines, an event ends with a blank line,
 * and a line starting with `:` is a comment that clients ignore. Values here
 * are numbers, names and compact JSON, which never hold a line break.
 */

/**
 * An event's head: its `id` (the client's `Last-Event-ID` once the event is
 * dispatched) and its name, then the start of its `data` line. The caller
 * writes the data and {@link SSE_EVENT_END}.
 */
export function sseEventHead(event: string, id: number | string | undefined): string {
  return `${id === undefined ? '' : `id: ${id}\n`}event: ${event}\ndata: `
}

/** What ends an event's data line and the event itself. */
export const SSE_EVENT_END = '\n\n'

/** A whole event whose data is `data`'s compact JSON. */
export function sseEvent(event: string, id: number | string | undefined, data: string): string {
  return `${sseEventHead(event, id)}${data}${SSE_EVENT_END}`
}

/** A comment line: ignored by clients, it keeps proxies and idle timers from closing the connection. */
export function sseComment(text: string): string {
  return `: ${text}\n\n`
}

/** The `retry` field: how long a client waits before reconnecting (ms). */
export function sseRetry(ms: number): string {
  return `retry: ${ms}\n\n`
}
