/**
 * The replication log on NATS JetStream: one stream per cluster, holding
 * commit messages on `price-store.<stream>.commit` and parts of large
 * batches on `price-store.<stream>.part`; positions are the stream's
 * sequence numbers. Publishes carry a message id (`Nats-Msg-Id`), so
 * JetStream drops a retried publish of the same batch within the stream's
 * duplicate window and answers with the first one's position. Nodes follow
 * the commits with an ordered consumer (ephemeral, flow-controlled, recreated
 * by the client at the next sequence after a server or connection failure).
 */
import { DeliverPolicy, DiscardPolicy, JetStreamApiCodes, JetStreamApiError, StorageType, jetstream, jetstreamManager } from '@nats-io/jetstream'
import type { JetStreamClient, JetStreamManager, StoredMsg, StreamConfig } from '@nats-io/jetstream'
import { connect, headers, nanos } from '@nats-io/transport-node'
import type { NatsConnection } from '@nats-io/transport-node'
import type { Appended, CommitMessage, LogBounds, LogMessageAt, ReplicationLog } from './replication-log.js'

/** The header naming the provider whose records a commit carries. */
export const PROVIDER_HEADER = 'Price-Store-Provider'
/** JetStream's message-id header, kept with each stored message. */
const MSG_ID_HEADER = 'Nats-Msg-Id'

/** How to reach and shape the stream. */
export interface JetStreamLogOptions {
  readonly servers: readonly string[]
  readonly stream: string
  /** Servers each message is stored on, when the stream is created. */
  readonly replicas: number
  /** Stream retention, when the stream is created (0: none). */
  readonly maxAgeMs: number
  readonly maxBytes: number
  /** How long JetStream remembers message ids to drop a retried publish. */
  readonly duplicateWindowMs: number
  /** Time a publish waits for JetStream's acknowledgement. */
  readonly publishTimeoutMs: number
  /** The connection's name, as NATS monitoring shows it. */
  readonly name: string
}

/** A {@link ReplicationLog} on a JetStream stream. */
export class JetStreamLog implements ReplicationLog {
  readonly name: string
  readonly #nc: NatsConnection
  readonly #js: JetStreamClient
  readonly #jsm: JetStreamManager
  readonly #options: JetStreamLogOptions
  readonly #commitSubject: string
  readonly #partSubject: string
  #connected = true

  private constructor(nc: NatsConnection, jsm: JetStreamManager, options: JetStreamLogOptions) {
    this.name = options.stream
    this.#nc = nc
    this.#jsm = jsm
    this.#js = jetstream(nc)
    this.#options = options
    this.#commitSubject = `price-store.${options.stream}.commit`
    this.#partSubject = `price-store.${options.stream}.part`
    void this.#watchStatus()
  }

  /**
   * Connects (reconnecting without end afterwards) and makes sure the stream exists, creating it with the
   * options' replicas and retention when it does not.
   * @throws when no server answers, or JetStream refuses the stream (the caller says which)
   */
  static async open(options: JetStreamLogOptions): Promise<JetStreamLog> {
    const nc = await connect({ servers: [...options.servers], name: options.name, maxReconnectAttempts: -1, reconnectTimeWait: 250, timeout: 5_000 })
    try {
      const jsm = await jetstreamManager(nc)
      const log = new JetStreamLog(nc, jsm, options)
      await log.#ensureStream()
      return log
    } catch (err) {
      await nc.close().catch(() => {})
      throw err
    }
  }

  get maxMessageBytes(): number {
    return this.#nc.info?.max_payload ?? 1024 * 1024
  }

  get connected(): boolean {
    return this.#connected && !this.#nc.isClosed()
  }

  async appendPart(data: Uint8Array, id: string): Promise<Appended> {
    const ack = await this.#js.publish(this.#partSubject, data, { msgID: id, timeout: this.#options.publishTimeoutMs })
    return { position: ack.seq, duplicate: ack.duplicate }
  }

  async appendCommit(data: Uint8Array, id: string, provider: string): Promise<Appended> {
    const h = headers()
    h.set(PROVIDER_HEADER, provider)
    const ack = await this.#js.publish(this.#commitSubject, data, { msgID: id, headers: h, timeout: this.#options.publishTimeoutMs })
    return { position: ack.seq, duplicate: ack.duplicate }
  }

  async readPart(position: number): Promise<Uint8Array | undefined> {
    const message = await this.#message({ seq: position })
    return message === null || message.subject !== this.#partSubject ? undefined : message.data
  }

  async messageAt(position: number): Promise<LogMessageAt | undefined> {
    const message = await this.#message({ seq: position })
    if (message === null) return undefined
    return { kind: message.subject === this.#commitSubject ? 'commit' : 'part', id: message.header?.get(MSG_ID_HEADER) || undefined }
  }

  async bounds(): Promise<LogBounds> {
    const { state } = await this.#jsm.streams.info(this.name)
    return { first: state.first_seq, last: state.last_seq }
  }

  async lastCommit(): Promise<number> {
    return (await this.#message({ last_by_subj: this.#commitSubject }))?.seq ?? 0
  }

  async *commits(after: number, signal: AbortSignal): AsyncIterable<CommitMessage> {
    if (signal.aborted) return
    const consumer = await this.#js.consumers.get(this.name, {
      filter_subjects: this.#commitSubject, deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: after + 1,
    })
    // Pull requests expire after 5 s (heartbeats every 2.5 s): after a whole NATS cluster restarts, the client
    // retries a failed consumer lookup only after `expires`, so the default 30 s left a node idle for half a minute.
    const messages = await consumer.consume({ max_messages: 256, expires: 5_000 })
    const stop = (): void => void messages.close().catch(() => {})
    signal.addEventListener('abort', stop, { once: true })
    try {
      for await (const message of messages) {
        if (signal.aborted) return
        const id = message.headers?.get(MSG_ID_HEADER) || undefined
        yield { position: message.seq, provider: message.headers?.get(PROVIDER_HEADER), data: message.data, id }
      }
    } finally {
      signal.removeEventListener('abort', stop)
      stop()
    }
  }

  async startAt(next: number): Promise<void> {
    // Purging "up to" a sequence past the end of an empty stream moves its first (and next) sequence there.
    await this.#jsm.streams.purge(this.name, { seq: next })
  }

  async close(): Promise<void> {
    if (!this.#nc.isClosed()) await this.#nc.close()
  }

  /** The stream's message the query names, or null when it holds none (any other failure throws). */
  async #message(query: { seq: number } | { last_by_subj: string }): Promise<StoredMsg | null> {
    try {
      return await this.#jsm.streams.getMessage(this.name, query)
    } catch (err) {
      if (err instanceof JetStreamApiError && err.code === JetStreamApiCodes.NoMessageFound) return null
      throw err
    }
  }

  async #ensureStream(): Promise<void> {
    const { stream, replicas, maxAgeMs, maxBytes, duplicateWindowMs } = this.#options
    try {
      const info = await this.#jsm.streams.info(stream)
      const subjects = info.config.subjects ?? []
      if (!subjects.includes(this.#commitSubject) || !subjects.includes(this.#partSubject)) {
        throw new Error(`the stream ${stream} exists but does not hold the subjects ${this.#commitSubject} and ${this.#partSubject}`)
      }
      return
    } catch (err) {
      if (!(err instanceof JetStreamApiError && err.code === JetStreamApiCodes.StreamNotFound)) throw err
    }
    const config: Partial<StreamConfig> & { name: string } = {
      name: stream,
      subjects: [this.#commitSubject, this.#partSubject],
      storage: StorageType.File,
      num_replicas: replicas,
      discard: DiscardPolicy.Old,
      // JetStream refuses a duplicate window longer than the stream's maximum age.
      duplicate_window: nanos(maxAgeMs > 0 ? Math.min(duplicateWindowMs, maxAgeMs) : duplicateWindowMs),
      max_age: nanos(maxAgeMs),
      max_bytes: maxBytes === 0 ? -1 : maxBytes,
    }
    await this.#jsm.streams.add(config)
  }

  async #watchStatus(): Promise<void> {
    for await (const status of this.#nc.status()) {
      if (status.type === 'disconnect' || status.type === 'reconnecting') this.#connected = false
      else if (status.type === 'reconnect') this.#connected = true
    }
  }
}
