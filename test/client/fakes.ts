/**
 * Fake transports and a fake clock for the client's unit tests: no network, no real time.
 * - {@link FakeClock}: timers that fire only when the test says, each recorded with its delay.
 * - {@link FakeCluster}: nodes serving `/ws` subscriptions from one shared list of commits (positions name the same
 *   commit on every node, as in a cluster), which a test kills, revives, or makes answer oddly.
 * - {@link fakeFetch}: a fetch answering from a function of the URL.
 */
import type { ClientTimers, WebSocketConstructor, WebSocketLike } from '../../src/client.js'

interface Timer {
  readonly ms: number
  readonly callback: () => void
  cleared: boolean
}

/** Timers that never fire by themselves: `fire(ms)` fires those of that delay, `runPauses()` those below a bound. */
export class FakeClock implements ClientTimers {
  readonly timers: Timer[] = []

  setTimeout(callback: () => void, ms: number): unknown {
    const timer = { ms, callback, cleared: false }
    this.timers.push(timer)
    return timer
  }

  clearTimeout(handle: unknown): void {
    if (handle !== undefined) (handle as Timer).cleared = true
  }

  /** The delays of the timers set so far (cleared or not). */
  delays(): number[] {
    return this.timers.map((timer) => timer.ms)
  }

  /** Fires every pending timer whose delay is `ms` (a timeout the test decides has run out). */
  fire(ms: number): number {
    let fired = 0
    for (const timer of this.timers) {
      if (!timer.cleared && timer.ms === ms) {
        timer.cleared = true
        fired++
        timer.callback()
      }
    }
    return fired
  }
}

/** A clock whose timers shorter than `bound` fire on the next turn (the pauses), the others never (the timeouts). */
export class PausingClock extends FakeClock {
  constructor(private readonly bound = 10_000) {
    super()
  }

  override setTimeout(callback: () => void, ms: number): unknown {
    const timer = super.setTimeout(callback, ms) as Timer
    if (ms < this.bound) setImmediate(() => {
      if (!timer.cleared) {
        timer.cleared = true
        callback()
      }
    })
    return timer
  }
}

export interface FakeCommit {
  readonly position: number
  readonly tag: string
  readonly records: readonly { readonly symbol: string; readonly value: number; readonly timestamp: number }[]
}

/** One fake node: whether it takes connections, how many commits it has applied, and how it answers a subscribe. */
export class FakeNode {
  alive = true
  /** Commits of the cluster this node has applied (it serves positions up to here). */
  applied = Number.POSITIVE_INFINITY
  /** When set, answers a subscribe with this instead of serving it. */
  answer: ((message: Record<string, unknown>) => Record<string, unknown>[]) | undefined
  /** The subscribe messages this node received. */
  readonly subscribes: Record<string, unknown>[] = []
  readonly sockets = new Set<FakeSocket>()

  constructor(readonly url: string, readonly cluster: FakeCluster) {}

  /** Every connection of this node lost at once (a killed process), and no new one taken. */
  kill(): void {
    this.alive = false
    for (const socket of this.sockets) socket.drop(1006)
  }
}

/** A connection of a fake node. */
export class FakeSocket implements WebSocketLike {
  readyState = 0
  onopen: ((event: unknown) => void) | null = null
  onmessage: ((event: { data: unknown }) => void) | null = null
  onclose: ((event: { code: number; reason: string }) => void) | null = null
  onerror: ((event: unknown) => void) | null = null
  /** The position after which this socket's subscription stands; undefined before it subscribed. */
  after: number | undefined

  constructor(readonly node: FakeNode) {}

  send(text: string): void {
    const message = JSON.parse(text) as Record<string, unknown>
    this.node.subscribes.push(message)
    const replies = this.node.answer?.(message) ?? this.node.cluster.serve(this, message)
    queueMicrotask(() => {
      for (const reply of replies) this.emit(reply)
    })
  }

  close(code = 1000, reason = ''): void {
    this.drop(code, reason)
  }

  emit(message: Record<string, unknown>): void {
    if (this.readyState === 1) this.onmessage?.({ data: JSON.stringify(message) })
  }

  drop(code: number, reason = ''): void {
    if (this.readyState === 3) return
    this.readyState = 3
    this.node.sockets.delete(this)
    this.onclose?.({ code, reason })
  }
}

/** Nodes sharing one list of commits: `commit()` appends one, and every node that applied it sends it live. */
export class FakeCluster {
  readonly commits: FakeCommit[] = []
  readonly nodes: FakeNode[]
  /** Every connection opened, in order: its node's URL. */
  readonly connections: string[] = []

  constructor(urls: readonly string[]) {
    this.nodes = urls.map((url) => new FakeNode(url, this))
  }

  /** The WebSocket class of the client. */
  readonly WebSocket: WebSocketConstructor = ((cluster: FakeCluster) =>
    class {
      constructor(url: string) {
        const base = url.replace(/^ws/, 'http').replace(/\/ws$/, '')
        const node = cluster.nodes.find((candidate) => candidate.url === base)
        if (node === undefined) throw new Error(`no fake node at ${url}`)
        cluster.connections.push(node.url)
        const socket = new FakeSocket(node)
        queueMicrotask(() => {
          if (!node.alive) return socket.drop(1006)
          node.sockets.add(socket)
          socket.readyState = 1
          socket.onopen?.({})
        })
        return socket
      }
    } as unknown as WebSocketConstructor)(this)

  node(url: string): FakeNode {
    return this.nodes.find((node) => node.url === url)!
  }

  /** Appends a commit of one record of `symbol`, sent live to every subscription of a node that applied it. */
  commit(symbol = 'BTC'): FakeCommit {
    const position = this.commits.length + 1
    const commit = { position, tag: tagOf(position), records: [{ symbol, value: position, timestamp: position * 1000 }] }
    this.commits.push(commit)
    for (const node of this.nodes) for (const socket of node.sockets) this.#sendLive(socket, commit)
    return commit
  }

  /** A subscribe served as a node does: `subscribed`, the commits after `after` it holds, then live ones. */
  serve(socket: FakeSocket, message: Record<string, unknown>): Record<string, unknown>[] {
    const node = socket.node
    const newest = Math.min(node.applied, this.commits.length)
    const eventId = (position: number): string => (position === 0 ? '0' : `${position}.${tagOf(position)}`)
    const after = message.after === undefined ? eventId(newest) : String(message.after)
    const position = Number(after.split('.')[0])
    const replies: Record<string, unknown>[] = [{ type: 'subscribed', id: message.id, symbols: message.symbols, unknown: [], channel: 'real_time', eventId: after, position }]
    let from = position
    if (position > newest) {
      replies.push({ type: 'reset', id: message.id, eventId: eventId(newest), reason: 'unknown', requested: position, position: newest })
      from = newest
    }
    for (const commit of this.commits.slice(from, newest)) replies.push(pricesOf(message.id, commit))
    socket.after = newest
    return replies
  }

  #sendLive(socket: FakeSocket, commit: FakeCommit): void {
    if (socket.after === undefined || commit.position > socket.node.applied || commit.position <= socket.after) return
    socket.after = commit.position
    socket.emit(pricesOf('price-client', commit))
  }
}

function tagOf(position: number): string {
  return (0x1000_0000 + position * 7919).toString(16).slice(-8)
}

function pricesOf(id: unknown, commit: FakeCommit): Record<string, unknown> {
  return { type: 'prices', id, eventId: `${commit.position}.${commit.tag}`, position: commit.position, records: commit.records }
}

/** A fetch answering `(url) => [status, body]`, or throwing what the function throws (a refused connection). */
export function fakeFetch(answer: (url: string, init: RequestInit | undefined) => readonly [number, unknown] | Promise<readonly [number, unknown]>): typeof fetch & { readonly urls: string[] } {
  const urls: string[] = []
  const fn = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const url = String(input)
    urls.push(url)
    const [status, body] = await answer(url, init)
    return new Response(typeof body === 'string' ? body : JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } })
  }
  return Object.assign(fn, { urls }) as typeof fetch & { readonly urls: string[] }
}

/** Takes the updates of an async iterable until `done(updates)` says so. */
export async function take<T>(iterable: AsyncIterable<T>, done: (updates: readonly T[]) => boolean, each: (update: T, updates: readonly T[]) => void = () => {}): Promise<T[]> {
  const updates: T[] = []
  for await (const update of iterable) {
    updates.push(update)
    each(update, updates)
    if (done(updates)) break
  }
  return updates
}
