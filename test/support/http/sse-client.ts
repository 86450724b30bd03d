/**
 * A minimal Server-Sent Events reader over `fetch` for the stream tests: it
 * parses what the server sends exactly as written (the named events, ids and
 * comments), where a real `EventSource` would hide comments and reconnect.
 */

/** One event as sent: its name, its id line (if any) and its data. */
export interface SentEvent {
  readonly event: string
  readonly id?: string
  readonly data: string
  /** `retry` given in this block, if any. */
  readonly retry?: string
}

export interface SseStream {
  readonly response: Response
  /** The next event, or `undefined` once the server ended the stream. */
  next(): Promise<SentEvent | undefined>
  /** Comment lines seen so far (heartbeats). */
  comments(): number
  /** Events up to and including the first named `name` (throws if the stream ends first). */
  until(name: string): Promise<SentEvent[]>
  close(): Promise<void>
}

/** Opens `url` and reads its answer as a stream of events; a non-200 answer is left in `response` unread. */
export async function openSse(url: string, headers: Record<string, string> = {}): Promise<SseStream> {
  const controller = new AbortController()
  const response = await fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: controller.signal })
  const reader = response.body?.getReader()
  const decoder = new TextDecoder()
  let buffer = ''
  let comments = 0
  let ended = false
  const queued: SentEvent[] = []
  const parseBlocks = (): void => {
    for (;;) {
      const end = buffer.indexOf('\n\n')
      if (end < 0) return
      const block = buffer.slice(0, end)
      buffer = buffer.slice(end + 2)
      const fields: Record<string, string> = {}
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) {
          comments++
          continue
        }
        const colon = line.indexOf(':')
        const name = colon < 0 ? line : line.slice(0, colon)
        const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '')
        fields[name] = name === 'data' && fields.data !== undefined ? `${fields.data}\n${value}` : value
      }
      if (fields.data !== undefined || fields.retry !== undefined) {
        queued.push({
          event: fields.event ?? 'message',
          data: fields.data ?? '',
          ...(fields.id === undefined ? {} : { id: fields.id }),
          ...(fields.retry === undefined ? {} : { retry: fields.retry }),
        })
      }
    }
  }
  const next = async (): Promise<SentEvent | undefined> => {
    for (;;) {
      const event = queued.shift()
      if (event !== undefined) return event
      if (ended || reader === undefined) return undefined
      let chunk: Awaited<ReturnType<NonNullable<typeof reader>["read"]>>
      try {
        chunk = await reader.read()
      } catch {
        ended = true
        continue
      }
      if (chunk.done) {
        ended = true
        continue
      }
      buffer += decoder.decode(chunk.value, { stream: true })
      parseBlocks()
    }
  }
  return {
    response,
    next,
    comments: () => comments,
    async until(name) {
      const seen: SentEvent[] = []
      for (;;) {
        const event = await next()
        if (event === undefined) throw new Error(`the stream ended before a ${name} event; got ${JSON.stringify(seen.map((e) => e.event))}`)
        seen.push(event)
        if (event.event === name) return seen
      }
    },
    async close() {
      controller.abort()
      await reader?.cancel().catch(() => {})
    },
  }
}

/** The next `count` named events, the block that only sets `retry` left out (throws if the stream ends first). */
export async function takeEvents(sse: SseStream, count: number): Promise<SentEvent[]> {
  const events: SentEvent[] = []
  while (events.length < count) {
    const event = await sse.next()
    if (event === undefined) throw new Error(`the stream ended after ${JSON.stringify(events)}`)
    if (event.retry === undefined) events.push(event)
  }
  return events
}
