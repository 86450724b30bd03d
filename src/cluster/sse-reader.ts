/**
 * Reads a Server-Sent Events body (the WHATWG HTML standard's format, as
 * price-store's own `/prices/stream` writes it: `event`, `id` and one `data`
 * line per event, `:` comments, `retry`) into events, a chunk at a time.
 */

/** One event: its name (`message` when none is given) and its data. */
export interface SseEvent {
  readonly event: string
  readonly data: string
}

/** The events of a byte stream, as they complete. */
export async function* readSse(body: AsyncIterable<Uint8Array>): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder()
  let buffer = ''
  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true })
    for (let end = blockEnd(buffer); end >= 0; end = blockEnd(buffer)) {
      const block = buffer.slice(0, end)
      buffer = buffer.slice(end).replace(/^(\r\n|\r|\n){2}/, '')
      const event = parseBlock(block)
      if (event !== undefined) yield event
    }
  }
}

/** Where the first complete block ends (before its blank line), or -1. */
function blockEnd(buffer: string): number {
  const match = /(\r\n|\r|\n)(\r\n|\r|\n)/.exec(buffer)
  return match === null ? -1 : match.index
}

function parseBlock(block: string): SseEvent | undefined {
  let event = 'message'
  const data: string[] = []
  for (const line of block.split(/\r\n|\r|\n/)) {
    if (line === '' || line.startsWith(':')) continue
    const colon = line.indexOf(':')
    const field = colon < 0 ? line : line.slice(0, colon)
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '')
    if (field === 'event') event = value
    else if (field === 'data') data.push(value)
  }
  return data.length === 0 ? undefined : { event, data: data.join('\n') }
}
