/**
 * An in-memory replication log for the cluster tests: a `MemoryLog` is the
 * stream (positions 1, 2, 3... shared by commits and parts, message-id
 * deduplication like JetStream's, a small `maxMessageBytes` so batches are
 * cut into parts), and each `connect()` is one node's connection to it, a
 * `ReplicationLog` of its own (closing it, as `ClusterNode.stop()` does,
 * closes only that connection).
 *
 * Faults are injected by the test, deterministically, on a connection:
 * a lost connection (the commits iteration throws after k more deliveries),
 * redeliveries (a commit yielded twice; an iteration that starts k commits
 * before the position asked), the connection switched off and on, an
 * acknowledgement lost after the message was taken; and on the log: parts
 * trimmed, the front trimmed (retention), message ids forgotten (the
 * duplicate window passed), the newest messages lost with their positions
 * given again to the next appends (a stream that came back without what it
 * had acknowledged). Nothing waits on a timer: an iteration waiting
 * for commits is woken by an append, a fault, a state change or its abort.
 */
import type { AppliedReport } from '../../../src/cluster/applied-positions.js'
import type { Appended, CommitMessage, LogBounds, LogMessageAt, LogPart, ReplicationLog } from '../../../src/cluster/replication-log.js'

/** One message of the log. */
interface Message {
  readonly position: number
  readonly kind: 'commit' | 'part'
  readonly id: string
  readonly data: Uint8Array
  readonly provider: string | undefined
  /** The writer's signature options (a JetStream header). */
  readonly signatures?: string | undefined
}

/** What the log holds at a commit: where, under which message id, for which provider. */
export interface CommitEntry {
  readonly position: number
  readonly id: string
  readonly provider: string | undefined
}

/** Options of {@link MemoryLog}. */
export interface MemoryLogOptions {
  /** The stream's name (default `MEMORY`). */
  readonly name?: string
  /** Largest message body, in bytes (default 4,096: batches of a few dozen records go as parts). */
  readonly maxMessageBytes?: number
}

/** The error a connection throws when it is down, lost or closed (a plain Error, as a transport's would be). */
export class ConnectionLost extends Error {
  constructor(what: string) {
    super(`memory log: ${what}`)
    this.name = 'ConnectionLost'
  }
}

/** The stream: every connection reads and appends the same messages. */
export class MemoryLog {
  readonly name: string
  readonly maxMessageBytes: number
  /** Messages by position; a trimmed one is gone from here. */
  readonly #messages = new Map<number, Message>()
  /** Commit positions still held, ascending (appends only ever add at the end). */
  #commits: number[] = []
  readonly #ids = new Map<string, number>()
  #first = 1
  #next = 1
  #wake: (() => void)[] = []

  constructor(options: MemoryLogOptions = {}) {
    this.name = options.name ?? 'MEMORY'
    this.maxMessageBytes = options.maxMessageBytes ?? 4_096
  }

  /** A new connection to this log: what a node follows and writes through. */
  connect(): MemoryLogConnection {
    return new MemoryLogConnection(this)
  }

  /** The positions the log holds (`first > last` when it holds none). */
  bounds(): LogBounds {
    return { first: this.#first, last: this.#next - 1 }
  }

  /** The newest commit's position, 0 when the log holds none. */
  lastCommit(): number {
    return this.#commits.at(-1) ?? 0
  }

  /** Every commit the log holds now, in order. */
  commitEntries(): CommitEntry[] {
    return this.#commits.map((position) => {
      const { id, provider } = this.#messages.get(position)!
      return { position, id, provider }
    })
  }

  /** Appends a message, or answers with the first one's position when its id was taken already. */
  append(kind: Message['kind'], data: Uint8Array, id: string, provider?: string, signatures?: string): Appended {
    const known = this.#ids.get(id)
    if (known !== undefined) return { position: known, duplicate: true }
    const position = this.#next++
    // A copy: the writer may reuse its buffer, a log keeps what it was sent.
    this.#messages.set(position, { position, kind, id, data: Uint8Array.from(data), provider, signatures })
    this.#ids.set(id, position)
    if (kind === 'commit') this.#commits.push(position)
    this.notify()
    return { position, duplicate: false }
  }

  /** The message at `position`, if the log still holds it. */
  message(position: number): Message | undefined {
    return this.#messages.get(position)
  }

  /** The first commit after `after` that the log holds (from its first position on, as JetStream starts a consumer). */
  commitAfter(after: number): Message | undefined {
    let lo = 0
    let hi = this.#commits.length
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      if (this.#commits[mid]! <= after) lo = mid + 1
      else hi = mid
    }
    const position = this.#commits[lo]
    return position === undefined ? undefined : this.#messages.get(position)
  }

  /** Where an iteration asked to start after `after` starts when it delivers the last `count` commits at or before it again. */
  commitsBefore(after: number, count: number): number {
    const earlier = this.#commits.filter((position) => position <= after)
    return count <= 0 ? after : earlier.length > count ? earlier[earlier.length - count - 1]! : 0
  }

  /** Removes one message (a part trimmed away: `readPart` answers undefined). */
  trim(position: number): void {
    this.#messages.delete(position)
    this.#commits = this.#commits.filter((each) => each !== position)
  }

  /** Removes every message up to `position` (retention): the log then starts after it. */
  trimThrough(position: number): void {
    for (const held of [...this.#messages.keys()]) if (held <= position) this.#messages.delete(held)
    this.#commits = this.#commits.filter((each) => each > position)
    this.#first = Math.max(this.#first, position + 1)
    this.#next = Math.max(this.#next, this.#first)
    this.notify()
  }

  /**
   * Loses every message after `position` and gives their positions again to the next appends, as a stream that
   * restarted without the messages it had acknowledged last (their ids are forgotten with them).
   */
  loseAfter(position: number): void {
    for (const held of [...this.#messages.keys()]) {
      if (held <= position) continue
      this.#ids.delete(this.#messages.get(held)!.id)
      this.#messages.delete(held)
    }
    this.#commits = this.#commits.filter((each) => each <= position)
    this.#next = Math.max(this.#first, position + 1)
    this.notify()
  }

  /** Forgets every message id (the duplicate window passed): a retried append is written again. */
  forgetIds(): void {
    this.#ids.clear()
  }

  /** Starts an empty log at position `next`. */
  startAt(next: number): void {
    if (this.#messages.size > 0 || this.#next !== this.#first) throw new Error(`memory log: startAt(${next}) on a log that holds messages`)
    this.#first = next
    this.#next = next
  }

  /** Resolves at the next change (an append, a fault set, a connection switched), or when `signal` aborts. */
  changed(signal: AbortSignal): Promise<void> {
    if (signal.aborted) return Promise.resolve()
    return new Promise((resolve) => {
      const done = (): void => {
        signal.removeEventListener('abort', done)
        resolve()
      }
      signal.addEventListener('abort', done, { once: true })
      this.#wake.push(done)
    })
  }

  /** Wakes every iteration waiting in {@link MemoryLog.changed}, so it looks again. */
  notify(): void {
    const waiting = this.#wake
    this.#wake = []
    for (const wake of waiting) wake()
  }

  /** The connections listening to applied reports, and their listeners (as core NATS subscribers of the report subject). */
  readonly #reportListeners = new Set<{ readonly conn: MemoryLogConnection; readonly listener: (report: AppliedReport) => void }>()

  /** Sends a report to every listener whose connection is up, each in a later task (as over a network). */
  broadcast(report: AppliedReport): void {
    for (const { conn, listener } of this.#reportListeners) {
      setImmediate(() => {
        if (conn.connected) listener(report)
      })
    }
  }

  /** Registers a listener of applied reports; the function returned removes it. */
  listen(conn: MemoryLogConnection, listener: (report: AppliedReport) => void): () => void {
    const entry = { conn, listener }
    this.#reportListeners.add(entry)
    return () => this.#reportListeners.delete(entry)
  }
}

/** One connection to a {@link MemoryLog}: a `ReplicationLog`, with the faults a test injects. */
export class MemoryLogConnection implements ReplicationLog {
  readonly log: MemoryLog
  #up = true
  /** False: connected, but the stream answers nothing (the minority side of a partition). */
  #reachable = true
  #closed = false
  /** Deliveries left before the running (or next) commits iteration throws; undefined: no loss planned. */
  #lossAfter: number | undefined
  /** Commits to deliver twice. */
  #redeliveries = 0
  /** Commits the next iteration starts before the position it was asked for. */
  #overlap = 0
  /** Appends whose acknowledgement is lost (the message is taken, the append rejects). */
  #lostAcks = 0
  /** Commits delivered, redeliveries included. */
  delivered = 0
  /** Commits delivered a second time (by {@link MemoryLogConnection.redeliverNext} or {@link MemoryLogConnection.overlapNext}). */
  redelivered = 0
  /** The newest commit this connection delivered. */
  #newest = 0
  /** Iterations started (the first follow, and every follow again after a loss). */
  iterations = 0

  constructor(log: MemoryLog) {
    this.log = log
  }

  get name(): string {
    return this.log.name
  }

  get maxMessageBytes(): number {
    return this.log.maxMessageBytes
  }

  get connected(): boolean {
    return this.#up && !this.#closed
  }

  /** Times the connection came back (see {@link setConnected}). */
  reconnects = 0

  /** Switches the connection off (reads and appends fail, a running iteration throws) or on again. */
  setConnected(up: boolean): void {
    if (up && !this.#up) this.reconnects++
    this.#up = up
    this.log.notify()
  }

  /**
   * Keeps the connection up but makes the stream unreachable through it (every call fails, nothing is delivered), as
   * a NATS server on the minority side of a partition does; or reachable again.
   */
  setStreamReachable(reachable: boolean): void {
    this.#reachable = reachable
    this.log.notify()
  }

  /** The running commits iteration (or the next one) throws after `deliveries` more commits: a lost connection. */
  loseConnectionAfter(deliveries: number): void {
    this.#lossAfter = deliveries
    this.log.notify()
  }

  /** The next `count` commits delivered are each delivered twice in a row. */
  redeliverNext(count: number): void {
    this.#redeliveries += count
  }

  /** The next commits iteration starts `count` commits before the position it is asked for: commits delivered again. */
  overlapNext(count: number): void {
    this.#overlap = count
  }

  /** The next `count` appends take their message and then reject, as a publish whose acknowledgement was lost. */
  loseAcks(count: number): void {
    this.#lostAcks += count
  }

  async appendPart(data: Uint8Array, id: string): Promise<Appended> {
    return this.#append('part', data, id)
  }

  async appendCommit(data: Uint8Array, id: string, provider: string, signatures?: string): Promise<Appended> {
    return this.#append('commit', data, id, provider, signatures)
  }

  async readPart(position: number): Promise<LogPart | undefined> {
    this.#assertUp()
    const message = this.log.message(position)
    return message?.kind === 'part' ? { data: message.data, id: message.id } : undefined
  }

  async messageAt(position: number): Promise<LogMessageAt | undefined> {
    this.#assertUp()
    const message = this.log.message(position)
    return message === undefined ? undefined : { kind: message.kind, id: message.id }
  }

  async bounds(): Promise<LogBounds> {
    this.#assertUp()
    return this.log.bounds()
  }

  async lastCommit(): Promise<number> {
    this.#assertUp()
    return this.log.lastCommit()
  }

  async *commits(after: number, signal: AbortSignal): AsyncIterable<CommitMessage> {
    this.iterations++
    // A connection that is down is waited for, as a client reconnecting would; a closed one fails.
    while (!signal.aborted && !this.#closed && !(this.#up && this.#reachable)) await this.log.changed(signal)
    let cursor = this.log.commitsBefore(after, this.#overlap)
    this.#overlap = 0
    while (!signal.aborted) {
      this.#checkLoss()
      const next = this.log.commitAfter(cursor)
      if (next === undefined) {
        await this.log.changed(signal)
        continue
      }
      cursor = next.position
      const copies = this.#redeliveries > 0 ? 2 : 1
      if (copies === 2) this.#redeliveries--
      for (let copy = 0; copy < copies && !signal.aborted; copy++) {
        // A loss may fall between a commit and its redelivery too.
        if (copy > 0) this.#checkLoss()
        this.delivered++
        if (next.position <= this.#newest) this.redelivered++
        this.#newest = Math.max(this.#newest, next.position)
        if (this.#lossAfter !== undefined) this.#lossAfter--
        yield { position: next.position, provider: next.provider, data: next.data, id: next.id, signatures: next.signatures }
      }
    }
  }

  async startAt(next: number): Promise<void> {
    this.#assertUp()
    this.log.startAt(next)
  }

  reportApplied(report: AppliedReport): void {
    if (this.connected && this.#reachable) this.log.broadcast(report)
  }

  onAppliedReport(listener: (report: AppliedReport) => void): () => void {
    return this.log.listen(this, listener)
  }

  async close(): Promise<void> {
    this.#closed = true
    this.log.notify()
  }

  async #append(kind: 'commit' | 'part', data: Uint8Array, id: string, provider?: string, signatures?: string): Promise<Appended> {
    this.#assertUp()
    if (data.byteLength > this.log.maxMessageBytes) throw new Error(`memory log: a message of ${data.byteLength} bytes is over ${this.log.maxMessageBytes}`)
    const appended = this.log.append(kind, data, id, provider, signatures)
    if (this.#lostAcks > 0) {
      this.#lostAcks--
      throw new ConnectionLost(`the acknowledgement of ${kind} ${appended.position} was lost (injected)`)
    }
    return appended
  }

  /** Throws when the connection is down or closed, or a planned loss is due. */
  #checkLoss(): void {
    this.#assertUp()
    if (this.#lossAfter === 0) {
      this.#lossAfter = undefined
      throw new ConnectionLost('connection lost (injected)')
    }
  }

  #assertUp(): void {
    if (this.#closed) throw new ConnectionLost('the connection is closed')
    if (!this.#up) throw new ConnectionLost('the connection is down')
    if (!this.#reachable) throw new ConnectionLost('the stream did not answer (no leader reachable)')
  }
}
