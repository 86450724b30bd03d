/**
 * Reads a Server-Sent Events body (the WHATWG HTML standard's format, as
 * price-store's own `/prices/stream` writes it: `event`, `id` and one `data`
 * line per event, `:` comments, `retry`) into events, a chunk at a time.
 *
 * One commit is one event, so an event may be tens of megabytes (a batch of
 * 10,000 records): each chunk is scanned once for line breaks, and a long
 * line is kept as the pieces it came in until it ends, so reading an event
 * costs its length, not its length times its number of chunks.
 */

/** One event: its name (`message` when none is given) and its data. */
export interface SseEvent {
  readonly event: string
  readonly data: string
}

const LINE_BREAK = /\r\n|\r|\n/g

/** The events of a byte stream, as they complete. */
export async function* readSse(body: AsyncIterable<Uint8Array>): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder()
  const event = new EventFields()
  /** The line being read, in the pieces it came in. */
  let pieces: string[] = []
  /** The last chunk ended with CR: a LF first in the next one belongs to it. */
  let afterCr = false
  for await (const chunk of body) {
    const text = decoder.decode(chunk, { stream: true })
    let start = afterCr && text.startsWith('\n') ? 1 : 0
    afterCr = false
    LINE_BREAK.lastIndex = start
    for (let found = LINE_BREAK.exec(text); found !== null; found = LINE_BREAK.exec(text)) {
      pieces.push(text.slice(start, found.index))
      const line = pieces.length === 1 ? (pieces[0] as string) : pieces.join('')
      pieces = []
      start = found.index + found[0].length
      if (start === text.length && found[0] === '\r') afterCr = true
      const complete = event.take(line)
      if (complete !== undefined) yield complete
    }
    if (start < text.length) pieces.push(text.slice(start))
  }
}

/** The fields of the event being read; a blank line completes it. */
class EventFields {
  #name = 'message'
  #data: string[] = []

  /** Takes one line; returns the event a blank line completes (none when it had no data). */
  take(line: string): SseEvent | undefined {
    if (line === '') {
      const event = this.#data.length === 0 ? undefined : { event: this.#name, data: this.#data.join('\n') }
      this.#name = 'message'
      this.#data = []
      return event
    }
    if (line.startsWith(':')) return undefined
    const colon = line.indexOf(':')
    const field = colon < 0 ? line : line.slice(0, colon)
    const value = colon < 0 ? '' : line.slice(colon + (line.charCodeAt(colon + 1) === 0x20 ? 2 : 1))
    if (field === 'event') this.#name = value
    else if (field === 'data') this.#data.push(value)
    return undefined
  }
}
