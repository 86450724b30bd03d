/**
 * The replication log on NATS JetStream: one stream per cluster, holding
 * commit messages on `price-store.<stream>.commit` and parts of large
 * batches on `price-store.<stream>.part`; positions are the stream's
 * sequence numbers. Publishes carry a message id (`Nats-Msg-Id`), so
 * JetStream drops a retried publish of the same batch within the stream's
 * duplicate window and answers with the first one's position. Nodes follow
 * the commits with an ordered consumer (ephemeral, flow-controlled, recreated
 * by the client at the next sequence after a server or connection failure),
 * each commit confirmed by the stream's leader before it is applied
 * (confirmed-commits.ts).
 *
 * The stream guards itself: a stream this node creates refuses message
 * deletes and purges (`deny_delete`, `deny_purge`; see #recreate for the one
 * exception), and an existing stream whose settings would lose commits is
 * refused.
 */
import { DeliverPolicy, DiscardPolicy, JetStreamApiCodes, JetStreamApiError, RetentionPolicy, StorageType, jetstream, jetstreamManager } from '@nats-io/jetstream'
import type { JetStreamClient, JetStreamManager, StoredMsg, StreamConfig, StreamInfo } from '@nats-io/jetstream'
import { headers, nanos } from '@nats-io/transport-node'
import type { MsgHdrs, NatsConnection } from '@nats-io/transport-node'
import { PriceStoreError } from '../errors.js'
import { connectNats, isPermissionRefusal, type NatsConnectOptions } from './nats-connection.js'
import { encodeAppliedReport, parseAppliedReport, type AppliedReport } from './applied-positions.js'
import { decodeCommit } from './batch-codec.js'
import { confirmedCommits, type StreamMessage } from './confirmed-commits.js'
import type { Appended, CommitMessage, LogBounds, LogMessageAt, LogPart, ReplicationLog } from './replication-log.js'

/** The header naming the provider whose records a commit carries. */
export const PROVIDER_HEADER = 'Price-Store-Provider'
/** The header carrying the signature options a commit's writer verified it under. */
export const SIGNATURES_HEADER = 'Price-Store-Signatures'
/** JetStream's message-id header, kept with each stored message. */
const MSG_ID_HEADER = 'Nats-Msg-Id'

/** How to reach (servers, credentials, TLS, the connection's name) and shape the stream. */
export interface JetStreamLogOptions extends NatsConnectOptions {
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
  /** Thrown instead of creating the stream when it does not exist (a store that may not start a history). */
  readonly missingStream?: Error | undefined
}

/** The JetStream API error of a purge the stream refuses (`deny_purge`). */
const PURGE_NOT_PERMITTED = 10110

/** A {@link ReplicationLog} on a JetStream stream. */
export class JetStreamLog implements ReplicationLog {
  readonly name: string
  readonly #nc: NatsConnection
  readonly #js: JetStreamClient
  readonly #jsm: JetStreamManager
  readonly #options: JetStreamLogOptions
  readonly #commitSubject: string
  readonly #partSubject: string
  /** Where nodes report what they applied (core NATS, outside the stream): see applied-positions.ts. */
  readonly #reportSubject: string
  #connected = true
  #reconnects = 0
  /** The config this node created the stream with, until {@link startAt} may have made it again. */
  #created: (Partial<StreamConfig> & { name: string }) | undefined
  #disagreements = 0

  private constructor(nc: NatsConnection, jsm: JetStreamManager, options: JetStreamLogOptions) {
    this.name = options.stream
    this.#nc = nc
    this.#jsm = jsm
    this.#js = jetstream(nc)
    this.#options = options
    this.#commitSubject = `price-store.${options.stream}.commit`
    this.#partSubject = `price-store.${options.stream}.part`
    this.#reportSubject = `price-store.${options.stream}.applied`
    void this.#watchStatus()
  }

  /**
   * Connects (reconnecting without end afterwards) and makes sure the stream exists, creating it with the
   * options' replicas and retention (and `deny_delete`, `deny_purge`) when it does not. An existing stream is checked:
   * settings that lose commits are refused.
   * @throws PriceStoreError `PRICE_INVALID_OPTIONS` (a credentials or TLS file cannot be read), `PRICE_LOG_UNAVAILABLE`
   *   with `details.parameter` naming what NATS refused (`auth`, `stream`) or the stream's setting at fault
   *   (`storage`, `retention`, `discard`, `max_msgs_per_subject`, `num_replicas`, `subjects`); the
   *   client's error when no server answers (the caller says so)
   */
  static async open(options: JetStreamLogOptions): Promise<JetStreamLog> {
    const nc = await connectNats(options)
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

  get reconnects(): number {
    return this.#reconnects
  }

  get connected(): boolean {
    return this.#connected && !this.#nc.isClosed()
  }

  async appendPart(data: Uint8Array, id: string): Promise<Appended> {
    const ack = await this.#js.publish(this.#partSubject, data, { msgID: id, timeout: this.#options.publishTimeoutMs })
    return { position: ack.seq, duplicate: ack.duplicate }
  }

  async appendCommit(data: Uint8Array, id: string, provider: string, signatures?: string): Promise<Appended> {
    const h = headers()
    h.set(PROVIDER_HEADER, provider)
    if (signatures !== undefined) h.set(SIGNATURES_HEADER, signatures)
    const ack = await this.#js.publish(this.#commitSubject, data, { msgID: id, headers: h, timeout: this.#options.publishTimeoutMs })
    return { position: ack.seq, duplicate: ack.duplicate }
  }

  async readPart(position: number): Promise<LogPart | undefined> {
    const message = await this.#message({ seq: position })
    if (message === null || message.subject !== this.#partSubject) return undefined
    return { data: message.data, id: message.header?.get(MSG_ID_HEADER) || undefined }
  }

  async messageAt(position: number): Promise<LogMessageAt | undefined> {
    const message = await this.#leaderAt(position)
    return message === undefined ? undefined : { kind: message.kind, id: message.id }
  }

  async bounds(): Promise<LogBounds> {
    const { state } = await this.#jsm.streams.info(this.name)
    return { first: state.first_seq, last: state.last_seq }
  }

  async lastCommit(): Promise<number> {
    return (await this.#message({ last_by_subj: this.#commitSubject }))?.seq ?? 0
  }

  /** Commits as the stream's leader holds them, whichever server's copy the consumer reads (confirmed-commits.ts). */
  commits(after: number, signal: AbortSignal): AsyncIterable<CommitMessage> {
    return confirmedCommits({
      consume: (from, stop) => this.#consume(from, stop),
      leaderAt: (position) => this.#leaderAt(position),
      leaderLast: async () => (await this.bounds()).last,
      partsOf: (commit) => {
        try {
          const decoded = decodeCommit(commit.data)
          return decoded.kind === 'parts' ? decoded.parts : []
        } catch {
          return [] // refused by the applier; every position before it is checked meanwhile
        }
      },
      onDisagreement: () => { this.#disagreements++ },
    }, after, signal)
  }

  /** Times a consumer's copy of the stream held another message than the leader (see confirmed-commits.ts). */
  get disagreements(): number {
    return this.#disagreements
  }

  /** The commits after `after` from an ordered consumer, which reads one server's copy of the stream. */
  async *#consume(after: number, signal: AbortSignal): AsyncIterable<StreamMessage> {
    if (signal.aborted) return
    const consumer = await this.#js.consumers.get(this.name, {
      filter_subjects: this.#commitSubject, deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: after + 1,
    })
    // Pull requests expire after 5 s (heartbeats every 2.5 s): after a whole NATS cluster restarts, the client
    // retries a failed consumer lookup only after `expires`, so the default 30 s left a node idle for half a minute.
    const messages = await consumer.consume({ max_messages: 256, expires: 5_000 })
    const stop = (): void => void messages.close().catch(() => {})
    // Aborted while the consumer was being made: an abort listener added now would never fire.
    if (signal.aborted) return stop()
    signal.addEventListener('abort', stop, { once: true })
    try {
      for await (const message of messages) {
        if (signal.aborted) return
        yield this.#streamMessage(message.seq, message.subject, message.headers, message.data)
      }
    } finally {
      signal.removeEventListener('abort', stop)
      stop()
    }
  }

  /** The message at `position` as the stream's leader holds it (`STREAM.MSG.GET` is answered by the leader). */
  async #leaderAt(position: number): Promise<StreamMessage | undefined> {
    const message = await this.#message({ seq: position })
    return message === null ? undefined : this.#streamMessage(message.seq, message.subject, message.header, message.data)
  }

  #streamMessage(position: number, subject: string, h: MsgHdrs | undefined, data: Uint8Array): StreamMessage {
    return {
      kind: subject === this.#commitSubject ? 'commit' : 'part',
      position,
      provider: h?.get(PROVIDER_HEADER) || undefined,
      data,
      id: h?.get(MSG_ID_HEADER) || undefined,
      signatures: h?.get(SIGNATURES_HEADER) || undefined,
    }
  }

  async startAt(next: number): Promise<void> {
    const created = this.#created
    this.#created = undefined
    if (created !== undefined && (await this.#info())?.state.last_seq === 0) return await this.#recreate(created, next)
    // Purging "up to" a sequence past the end of an empty stream moves its first (and next) sequence there.
    try {
      await this.#jsm.streams.purge(this.name, { seq: next })
    } catch (err) {
      if (!isPermissionRefusal(err) && !(err instanceof JetStreamApiError && err.code === PURGE_NOT_PERMITTED)) throw err
      throw refused('deny_purge',
        `the stream ${this.name} is empty and cannot be started after this store's position ${next - 1}: it refuses purges (deny_purge is set, or this NATS user may not purge). Let this node create the stream: delete the empty stream with an admin user and start this node first, with a user that may create and purge it (docs/cluster.md#secure-deployment)`,
        err)
    }
  }

  /**
   * Makes the stream this node just created, still never written, again so that it starts at `next`: from
   * nats-server 2.10 with `first_seq`, guards kept. 2.9 knows no `first_seq`: the stream is made without
   * `deny_purge` and purged up to `next`, and keeps no `deny_purge` (set by an update afterwards, it makes a
   * restarting 2.9.10 server of a replicated stream crash: it replays the creation and refuses to cancel deny_purge).
   */
  async #recreate(config: Partial<StreamConfig> & { name: string }, next: number): Promise<void> {
    try {
      await this.#jsm.streams.delete(this.name)
      if (serverAtLeast(this.#nc.info?.version, 2, 10)) {
        await this.#jsm.streams.add({ ...config, first_seq: next })
        return
      }
      await this.#jsm.streams.add({ ...config, deny_purge: false })
      await this.#jsm.streams.purge(this.name, { seq: next })
    } catch (err) {
      if (!isPermissionRefusal(err)) throw err
      throw refused('stream', `the new stream ${this.name} cannot be started after this store's position ${next - 1}: this NATS user may not make it again (docs/cluster.md#secure-deployment)`, err)
    }
  }

  reportApplied(report: AppliedReport): void {
    // Core NATS, not the stream: a report matters only to the nodes listening now, and one lost is made again.
    if (this.#nc.isClosed()) return
    try {
      this.#nc.publish(this.#reportSubject, encodeAppliedReport(report))
    } catch {
      // Disconnected: the next report (within a second) goes once the connection is back.
    }
  }

  onAppliedReport(listener: (report: AppliedReport) => void): () => void {
    const subscription = this.#nc.subscribe(this.#reportSubject, {
      callback: (err, message) => {
        const report = err === null ? parseAppliedReport(message.data) : undefined
        if (report !== undefined) listener(report)
      },
    })
    return () => subscription.unsubscribe()
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
    const info = await this.#info()
    if (info === undefined) {
      if (this.#options.missingStream !== undefined) throw this.#options.missingStream
      return await this.#createStream()
    }
    const unsafe = unsafeSetting(info.config, this.#options.replicas, [this.#commitSubject, this.#partSubject])
    if (unsafe !== undefined) {
      throw refused(unsafe.setting, `the stream ${this.name} ${unsafe.problem}. This node does not follow it: recreate the stream (admin user), or name another one (stream, --nats-stream)`)
    }
    // An existing stream keeps its deny_delete and deny_purge: set by an update, they make a restarting nats-server
    // 2.9.10 of a replicated stream crash (see #recreate). The authorization block of docs/cluster.md denies purges
    // and deletes to the nodes' users.
  }

  async #info(): Promise<StreamInfo | undefined> {
    try {
      return await this.#jsm.streams.info(this.name)
    } catch (err) {
      if (err instanceof JetStreamApiError && err.code === JetStreamApiCodes.StreamNotFound) return undefined
      throw err
    }
  }

  async #createStream(): Promise<void> {
    const { stream, replicas, maxAgeMs, maxBytes, duplicateWindowMs } = this.#options
    const config: Partial<StreamConfig> & { name: string } = {
      name: stream,
      subjects: [this.#commitSubject, this.#partSubject],
      storage: StorageType.File,
      retention: RetentionPolicy.Limits,
      num_replicas: replicas,
      discard: DiscardPolicy.Old,
      // JetStream refuses a duplicate window longer than the stream's maximum age.
      duplicate_window: nanos(maxAgeMs > 0 ? Math.min(duplicateWindowMs, maxAgeMs) : duplicateWindowMs),
      max_age: nanos(maxAgeMs),
      max_bytes: maxBytes === 0 ? -1 : maxBytes,
      deny_delete: true,
      deny_purge: true,
    }
    try {
      await this.#jsm.streams.add(config)
    } catch (err) {
      if (!isPermissionRefusal(err)) throw err
      throw refused('stream', `the stream ${stream} does not exist and this NATS user may not create it: start one node once with the admin user, which creates it (docs/cluster.md#secure-deployment)`, err)
    }
    this.#created = config
  }

  async #watchStatus(): Promise<void> {
    for await (const status of this.#nc.status()) {
      if (status.type === 'disconnect' || status.type === 'reconnecting') this.#connected = false
      else if (status.type === 'reconnect') {
        this.#connected = true
        this.#reconnects++
      }
    }
  }
}

/** The first of an existing stream's settings that would lose commits or refuse them, or undefined. */
function unsafeSetting(config: StreamConfig, replicas: number, subjects: readonly string[]): { setting: string; problem: string } | undefined {
  if (config.storage !== StorageType.File) return { setting: 'storage', problem: `keeps its messages in ${config.storage} (storage), which a restart of its servers empties` }
  if (config.retention !== RetentionPolicy.Limits) {
    return { setting: 'retention', problem: `removes messages once consumed (retention: ${config.retention}), before every node applied them` }
  }
  if (config.discard !== DiscardPolicy.Old) return { setting: 'discard', problem: 'refuses new commits once a limit is reached (discard: new) instead of dropping the oldest' }
  if ((config.max_msgs_per_subject ?? 0) > 0) {
    return { setting: 'max_msgs_per_subject', problem: `keeps only the last ${config.max_msgs_per_subject} messages of each subject (max_msgs_per_subject), so it drops every older commit` }
  }
  if (config.num_replicas < replicas) {
    return { setting: 'num_replicas', problem: `is stored on ${config.num_replicas} server(s) (num_replicas), fewer than the ${replicas} asked for (replicas, --nats-replicas)` }
  }
  const missing = subjects.filter((subject) => !(config.subjects ?? []).includes(subject))
  if (missing.length > 0) return { setting: 'subjects', problem: `does not hold the subjects ${missing.join(' and ')} (subjects)` }
  return undefined
}

/** Whether a server version (`2.9.10`) is at least `major.minor`. */
function serverAtLeast(version: string | undefined, major: number, minor: number): boolean {
  const [a = 0, b = 0] = (version ?? '').split('.').map(Number)
  return a > major || (a === major && b >= minor)
}

/** The stream refused as it is, or NATS refused this node something: the setting or what was refused in `details.parameter`. */
function refused(parameter: string, message: string, cause?: unknown): PriceStoreError {
  return new PriceStoreError('PRICE_LOG_UNAVAILABLE', message, { details: { parameter }, ...(cause === undefined ? {} : { cause }) })
}
