/** What the page takes of a streamed record. */
export interface StreamedPrice {
  readonly symbol: string
  readonly value: number
  readonly timestamp: number
}

/** Where a feed stands: opening, open (its `ready` came), or waiting to reconnect after losing the stream. */
export type LiveState = 'connecting' | 'open' | 'reconnecting'

/** What a {@link LiveFeed} tells the page. */
export interface LiveFeedHandlers {
  /** Each commit's records for the feed's symbol, in commit order. */
  onPrices(records: readonly StreamedPrice[]): void
  /** Commits were lost (the server's journal no longer holds them): the page reads the current state again. */
  onReset(): void
  onState(state: LiveState): void
}

/** Time before opening a stream again once the browser gave it up (a 503 from a full server, say): ms, doubled on each failure in a row. */
const REOPEN_MS = 3000
/** The longest time between two tries (ms): a server without a stream is asked once a minute, not every 3 s. */
const MAX_REOPEN_MS = 60_000

/**
 * Follows `GET /prices/stream?symbol=S` with an `EventSource`. The browser
 * reconnects by itself after a lost connection, an `end` or an `overflow`,
 * sending the last event's id as `Last-Event-ID`, so the server replays what
 * was missed; when the browser gives up (an answer other than a stream),
 * the feed opens a new one after a pause, from the last position it saw
 * (`after=`), so nothing is missed either.
 */
export class LiveFeed {
  readonly #url: string
  readonly #handlers: LiveFeedHandlers
  #source: EventSource | undefined
  #position: number | undefined
  #reopen: number | undefined
  /** Tries in a row that the browser gave up. */
  #failures = 0
  #closed = false
  #opened: (open: boolean) => void = () => {}
  /** Resolves with true once the stream is open (commits after that reach the page), false if the first try failed. */
  readonly ready: Promise<boolean>

  /** `url`: the stream's address for the symbol, `after=` left to the feed. */
  constructor(url: string, handlers: LiveFeedHandlers) {
    this.#url = url
    this.#handlers = handlers
    this.ready = new Promise((resolve) => (this.#opened = resolve))
    this.#open()
  }

  /** Stops following: no handler is called after this. */
  close(): void {
    this.#closed = true
    this.#source?.close()
    clearTimeout(this.#reopen)
    this.#opened(false)
  }

  #open(): void {
    const url = this.#position === undefined ? this.#url : `${this.#url}&after=${this.#position}`
    const source = new EventSource(url)
    this.#source = source
    this.#handlers.onState('connecting')
    const moved = (event: Event): { position?: number } => {
      const data = JSON.parse((event as MessageEvent<string>).data) as { position?: number }
      if (typeof data.position === 'number') this.#position = data.position
      return data
    }
    source.addEventListener('ready', (event) => {
      if (this.#closed) return
      moved(event)
      this.#failures = 0
      this.#handlers.onState('open')
      this.#opened(true)
    })
    source.addEventListener('prices', (event) => {
      if (this.#closed) return
      const data = moved(event) as { records?: StreamedPrice[] }
      this.#handlers.onPrices(data.records ?? [])
    })
    source.addEventListener('progress', moved)
    source.addEventListener('reset', (event) => {
      if (this.#closed) return
      moved(event)
      this.#handlers.onReset()
    })
    source.onerror = () => {
      if (this.#closed) return
      this.#handlers.onState('reconnecting')
      this.#opened(false)
      if (source.readyState !== EventSource.CLOSED) return // the browser tries again by itself
      source.close()
      this.#reopen = window.setTimeout(() => this.#open(), Math.min(MAX_REOPEN_MS, REOPEN_MS * 2 ** this.#failures++))
    }
  }
}
