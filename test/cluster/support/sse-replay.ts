/**
 * Reads a node's live stream (`GET /prices/stream`) as plain Server-Sent Events, without an
 * `EventSource`: the events up to the one whose id is a given position, then the connection is
 * closed. The fault tests compare a client's events with a node's own replay (`?after=0`).
 */
import { NODE_DEADLINE_MS } from './node-process.js'

/** One event as an `EventSource` dispatches it: its name, its id (the last one set) and its data. */
export interface StreamEvent {
  readonly type: string
  readonly id: string
  readonly data: string
}

/** The events of `url` until a `prices` or `progress` event with id `until` (included). */
export async function readStream(url: string, until: number): Promise<StreamEvent[]> {
  const controller = new AbortController()
  const timer = setTimeout(() => controller.abort(new Error(`${url}: no event with id ${until} within ${NODE_DEADLINE_MS} ms`)), NODE_DEADLINE_MS)
  const events: StreamEvent[] = []
  try {
    const res = await fetch(url, { signal: controller.signal })
    if (res.status !== 200 || res.body === null) throw new Error(`${url} answered ${res.status}: ${await res.text()}`)
    const decoder = new TextDecoder()
    let pending = ''
    let id = ''
    let type = ''
    let data: string[] = []
    for await (const chunk of res.body) {
      pending += decoder.decode(chunk as Uint8Array, { stream: true })
      let newline: number
      while ((newline = pending.indexOf('\n')) >= 0) {
        const line = pending.slice(0, newline)
        pending = pending.slice(newline + 1)
        if (line === '') {
          if (data.length > 0) {
            const event = { type: type === '' ? 'message' : type, id, data: data.join('\n') }
            events.push(event)
            if ((event.type === 'prices' || event.type === 'progress') && Number(event.id.split('.')[0]) >= until) return events
          }
          type = ''
          data = []
          continue
        }
        if (line.startsWith(':')) continue
        const colon = line.indexOf(':')
        const field = colon < 0 ? line : line.slice(0, colon)
        const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '')
        if (field === 'id') id = value
        else if (field === 'event') type = value
        else if (field === 'data') data.push(value)
      }
    }
    throw new Error(`${url} ended before the event with id ${until}`)
  } finally {
    clearTimeout(timer)
    controller.abort()
  }
}
