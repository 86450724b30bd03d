/**
 * `serve --nats ...`: the flags that make the served store a node of a
 * cluster (price-store/cluster), and starting that node. Secrets for NATS
 * (password, token) come from files only: a command line is visible to
 * every user of the machine.
 */
import { readFileSync } from 'node:fs'
import { hostname } from 'node:os'
import { resolve } from 'node:path'
import { isNodeId, nodeIdOf } from '../cluster/applied-positions.js'
import { ClusterNode } from '../cluster/cluster-node.js'
import { describeResent } from '../cluster/follow-checks.js'
import { MAX_WRITE_CONCERN, type ClusterOptions } from '../cluster/cluster-options.js'
import { HttpFollowLog } from '../cluster/http-follow-log.js'
import type { NatsAuth, NatsTls } from '../cluster/nats-connection.js'
import { isPriceStoreError, type PriceStoreError } from '../errors.js'
import { isTrimmedPast } from '../cluster/applier.js'
import { DEFAULT_KEEP } from '../cluster/snapshot-retention.js'
import type { SnapshotPlan } from './snapshot-schedule.js'
import type { PriceStore } from '../store/price-store.js'
import { CliError, UsageError, parseIntegerOption } from './args.js'
import { MAX_TIMER_MS } from '../rules/options.js'
import type { CliIo } from './io.js'
import { warnIfShared } from './secret-file.js'

/** The flags, for `parseCommandArgs`. */
export const CLUSTER_FLAGS = {
  nats: { type: 'string' },
  follow: { type: 'string' },
  'nats-stream': { type: 'string' },
  'nats-replicas': { type: 'string' },
  'nats-max-age-days': { type: 'string' },
  'nats-max-bytes': { type: 'string' },
  'nats-creds': { type: 'string' },
  'nats-nkey': { type: 'string' },
  'nats-user': { type: 'string' },
  'nats-password-file': { type: 'string' },
  'nats-token-file': { type: 'string' },
  'nats-tls-ca': { type: 'string' },
  'nats-tls-cert': { type: 'string' },
  'nats-tls-key': { type: 'string' },
  'apply-wait-ms': { type: 'string' },
  'write-concern': { type: 'string' },
  'node-id': { type: 'string' },
  'adopt-empty-stream': { type: 'boolean' },
  'snapshot-every-minutes': { type: 'string' },
  'snapshot-keep': { type: 'string' },
  'max-lag': { type: 'string' },
  'max-staleness-ms': { type: 'string' },
} as const

/** The flags a follower takes too (it reports its health like a node). */
const FOLLOWER_FLAGS: readonly string[] = ['follow', 'max-lag', 'max-staleness-ms']

/** Their help text. */
export const CLUSTER_FLAGS_HELP = `Cluster (several nodes replicating one NATS JetStream stream; see docs/cluster.md):
  --nats URL[,URL...]         be a node of the cluster whose log is on these NATS servers: POST /prices
                              writes go to the stream, and every node (this one too) applies the stream
  --nats-stream NAME          the stream (default PRICES); created when missing, with:
  --nats-replicas N             servers holding each message (default 3 with three or more URLs, else 1)
  --nats-max-age-days N         stream retention by age (default none; nodes keep their own history)
  --nats-max-bytes N            stream retention by size (default none)
  --nats-creds FILE           authenticate to NATS with a .creds file (user JWT and nkey seed), or:
  --nats-nkey FILE              with the nkey seed in FILE, or:
  --nats-user NAME              as user NAME, with the password in --nats-password-file FILE, or:
  --nats-token-file FILE        with the token in FILE (secrets come from files only, never the command line)
  --nats-tls-ca FILE          TLS to NATS, checking the servers' certificates against this CA (a tls:// URL
                              turns TLS on with the system's CAs)
  --nats-tls-cert FILE        with --nats-tls-key FILE: this node's client certificate, for servers that
                              verify clients
  --write-concern W           a write answers once the stream took it and W nodes applied it (default 1: this
                              node; 0: the stream only; a request's x-write-concern header overrides it)
  --apply-wait-ms N           ... within N ms, else 503 PRICE_WRITE_CONCERN_TIMEOUT (default 5000; 0 = answer at
                              once after the stream acknowledged it, whatever the write concern)
  --node-id ID                this node's id in the cluster (default: the host name and the database's path)
  --adopt-empty-stream        let this node's store, which holds records, start an empty stream after its
                              position: once, on the node whose history the cluster takes (a single server
                              becoming the first node of a cluster); without it such a start is refused
  --snapshot-every-minutes N  publish a snapshot of this node's store into the stream's NATS Object Store
                              bucket every N minutes (default never); a new node, or one whose position the
                              stream's retention removed, is seeded from the newest one (see docs/cluster.md)
  --snapshot-keep N           snapshots the bucket keeps, the newest always (default 3)
  --max-lag N                 GET /health answers 503 while this node is more than N positions behind the stream
  --max-staleness-ms N        GET /health answers 503 while this node has not heard from the stream for N ms
  --follow URL                instead of --nats: a read copy of one price-store server (its base URL), applying
                              its live stream at its positions; takes no writes (see docs/cluster.md)`

type Values = Readonly<Record<string, string | string[] | boolean | undefined>>

/**
 * What the flags ask for: a node of a cluster on NATS, or a follower of one server; `maxLag` for the health check;
 * `secretFiles` (what each holds, and where), to warn about when other users may read them.
 */
export type ClusterFlags = HealthBounds & (
  | {
    readonly options: ClusterOptions
    readonly follow?: undefined
    readonly secretFiles?: readonly (readonly [string, string])[]
    /** `--snapshot-every-minutes` and `--snapshot-keep`: absent when snapshots are not published. */
    readonly snapshots?: SnapshotPlan
  }
  | { readonly options?: undefined; readonly follow: string }
)

/** The bounds of the health check: lag (positions) and staleness (ms). */
export interface HealthBounds {
  readonly maxLag: number | undefined
  readonly maxStalenessMs: number | undefined
}

/**
 * The cluster options the flags give, or `undefined` without `--nats` and `--follow`. Reads the NATS secret files
 * (before the store opens, so a bad one changes nothing).
 * @throws UsageError for a bad value, a bad combination, an unreadable or empty file, or credentials in a --nats URL
 */
export function parseClusterFlags(values: Values): ClusterFlags | undefined {
  const text = (name: keyof typeof CLUSTER_FLAGS): string | undefined => {
    const value = values[name]
    return typeof value === 'string' ? value : undefined
  }
  const servers = text('nats')
  const follow = text('follow')
  const maxLag = parseIntegerOption('max-lag', text('max-lag'), 0, Number.MAX_SAFE_INTEGER)
  const maxStalenessMs = parseIntegerOption('max-staleness-ms', text('max-staleness-ms'), 0, Number.MAX_SAFE_INTEGER)
  if (follow !== undefined) {
    if (servers !== undefined) throw new UsageError('give --nats or --follow, not both')
    if (!/^https?:\/\/\S+$/.test(follow)) throw new UsageError(`--follow takes the base URL of a price-store server, e.g. http://primary:9000 (got ${JSON.stringify(follow)})`)
    const stray = Object.keys(CLUSTER_FLAGS).find((name) => !FOLLOWER_FLAGS.includes(name) && values[name] !== undefined)
    if (stray !== undefined) throw new UsageError(`--${stray} needs --nats (a follower takes its primary's positions and no writes)`)
    return { follow, maxLag, maxStalenessMs }
  }
  if (servers === undefined) {
    const stray = Object.keys(CLUSTER_FLAGS).find((name) => name !== 'nats' && values[name] !== undefined)
    if (stray !== undefined) throw new UsageError(`--${stray} needs --nats (the NATS servers of the cluster)`)
    return undefined
  }
  const replicas = parseIntegerOption('nats-replicas', text('nats-replicas'), 1, 5)
  const days = parseIntegerOption('nats-max-age-days', text('nats-max-age-days'), 1, 100_000)
  const maxBytes = parseIntegerOption('nats-max-bytes', text('nats-max-bytes'), 1, Number.MAX_SAFE_INTEGER)
  const applyWaitMs = parseIntegerOption('apply-wait-ms', text('apply-wait-ms'), 0, 2_147_483_647)
  const writeConcern = parseIntegerOption('write-concern', text('write-concern'), 0, MAX_WRITE_CONCERN)
  const snapshotMinutes = parseIntegerOption('snapshot-every-minutes', text('snapshot-every-minutes'), 1, Math.floor(MAX_TIMER_MS / 60_000))
  const snapshotKeep = parseIntegerOption('snapshot-keep', text('snapshot-keep'), 1, 1_000)
  if (snapshotKeep !== undefined && snapshotMinutes === undefined) throw new UsageError('--snapshot-keep needs --snapshot-every-minutes (a node that publishes snapshots)')
  const nodeId = text('node-id')
  if (nodeId !== undefined && !isNodeId(nodeId)) throw new UsageError(`--node-id: a node id is 1 to 128 printable ASCII characters, without spaces (got ${JSON.stringify(String(nodeId).slice(0, 40))})`)
  const stream = text('nats-stream')
  // Not even quoted back: the URL holds a secret.
  if (servers.split(',').some((url) => /^\s*[a-z]+:\/\/[^/]*@/i.test(url))) {
    throw new UsageError('--nats: a server URL holds credentials (user:password@ or token@), which every user of this machine may read on its command line: give them with --nats-user and --nats-password-file, or --nats-token-file')
  }
  const secretFiles: [string, string][] = []
  const auth = authFlags(text, secretFiles)
  const tls = tlsFlags(text, secretFiles)
  const options: ClusterOptions = {
    servers,
    name: 'price-store serve',
    ...(auth === undefined ? {} : { auth }),
    ...(tls === undefined ? {} : { tls }),
    ...(stream === undefined ? {} : { stream }),
    ...(replicas === undefined ? {} : { replicas }),
    ...(days === undefined ? {} : { maxAgeMs: days * 86_400_000 }),
    ...(maxBytes === undefined ? {} : { maxBytes }),
    ...(applyWaitMs === undefined ? {} : { applyWaitMs }),
    ...(writeConcern === undefined ? {} : { writeConcern }),
    ...(nodeId === undefined ? {} : { nodeId }),
    ...(values['adopt-empty-stream'] === true ? { adoptEmptyStream: true } : {}),
  }
  const snapshots = snapshotMinutes === undefined ? {} : { snapshots: { everyMs: snapshotMinutes * 60_000, keep: snapshotKeep ?? DEFAULT_KEEP } }
  return { options, maxLag, maxStalenessMs, secretFiles, ...snapshots }
}

type FlagText = (name: keyof typeof CLUSTER_FLAGS) => string | undefined

/** What each flag's file holds, for messages. */
const SECRET_FILES = { 'nats-creds': 'NATS credentials file', 'nats-nkey': 'NATS nkey seed file', 'nats-password-file': 'NATS password file', 'nats-token-file': 'NATS token file' } as const

/** `--nats-creds`, `--nats-nkey`, `--nats-user` with `--nats-password-file`, or `--nats-token-file`: one of them. */
function authFlags(text: FlagText, secretFiles: [string, string][]): NatsAuth | undefined {
  const given = (['nats-creds', 'nats-nkey', 'nats-user', 'nats-token-file'] as const).filter((name) => text(name) !== undefined)
  if (given.length > 1) throw new UsageError(`give one way to authenticate to NATS, not --${given.join(' and --')}`)
  const user = text('nats-user')
  const passwordFile = text('nats-password-file')
  if (passwordFile !== undefined && user === undefined) throw new UsageError('--nats-password-file needs --nats-user (the user whose password it holds)')
  if (user !== undefined && passwordFile === undefined) throw new UsageError('--nats-user needs --nats-password-file (a password is never given on the command line)')
  const flag = given[0]
  if (flag === undefined) return undefined
  const fileFlag = flag === 'nats-user' ? 'nats-password-file' : flag
  const file = text(fileFlag) as string
  const content = readFlagFile(fileFlag, file)
  secretFiles.push([SECRET_FILES[fileFlag], file])
  if (flag === 'nats-creds') return { credsFile: file }
  if (flag === 'nats-nkey') return { nkeySeedFile: file }
  // A password or token is the file's content less one final newline, as the write token is.
  const secret = content.toString('utf8').replace(/\r?\n$/, '')
  if (secret === '') throw new UsageError(`--${fileFlag}: the file ${file} is empty`)
  return flag === 'nats-user' ? { user: user as string, password: secret } : { token: secret }
}

/** `--nats-tls-ca`, and `--nats-tls-cert` with `--nats-tls-key`: TLS on when any is given. */
function tlsFlags(text: FlagText, secretFiles: [string, string][]): NatsTls | undefined {
  const caFile = text('nats-tls-ca')
  const certFile = text('nats-tls-cert')
  const keyFile = text('nats-tls-key')
  if ((certFile === undefined) !== (keyFile === undefined)) throw new UsageError('--nats-tls-cert and --nats-tls-key go together (a client certificate and its key)')
  if (caFile !== undefined) readFlagFile('nats-tls-ca', caFile)
  if (certFile !== undefined) readFlagFile('nats-tls-cert', certFile)
  if (keyFile !== undefined) {
    readFlagFile('nats-tls-key', keyFile)
    secretFiles.push(['NATS TLS key file', keyFile])
  }
  if (caFile === undefined && certFile === undefined) return undefined
  return { ...(caFile === undefined ? {} : { caFile }), ...(certFile === undefined ? {} : { certFile, keyFile: keyFile as string }) }
}

/** The bytes of a file a flag names; the message names the flag, the file and why, never the content. */
function readFlagFile(flag: string, path: string): Buffer {
  try {
    return readFileSync(path)
  } catch (err) {
    throw new UsageError(`--${flag}: cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? String(err)})`)
  }
}

/**
 * Starts the node (or follower) on the opened store.
 * @throws CliError saying what to do when NATS cannot be reached or the store cannot follow the stream
 */
export async function startClusterNode(store: PriceStore, flags: ClusterFlags, location: string, io: CliIo, rebuild: RebuildNotices = {}): Promise<ClusterNode> {
  const logged = nodeReports(io)
  const reports = {
    ...logged,
    onForked: rebuild.onForked ?? (() => {}),
    onFailure: (err: PriceStoreError) => {
      logged.onFailure(err)
      if (isTrimmedPast(err)) rebuild.onTrimmed?.()
    },
  }
  if (flags.follow === undefined) for (const [what, path] of flags.secretFiles ?? []) await warnIfShared(path, what, io)
  try {
    if (flags.follow !== undefined) return await ClusterNode.follow(store, new HttpFollowLog(flags.follow, store.provider), reports)
    // A server waits for NATS as long as it takes (a NATS cluster restarting), saying so at each try.
    return await ClusterNode.start(store, {
      nodeId: defaultNodeId(location), startTimeoutMs: Number.MAX_SAFE_INTEGER, ...flags.options, ...reports,
    })
  } catch (err) {
    if (isPriceStoreError(err, 'PRICE_INVALID_OPTIONS')) throw new UsageError(`--nats: ${err.message}`)
    if (isPriceStoreError(err)) throw new CliError(`${err.message} [${err.code}]`, 1, { cause: err })
    throw err
  }
}

/** What the owner of the store is told when it is to be rebuilt: it forked from the stream, or fell behind its retention. */
export interface RebuildNotices {
  readonly onForked?: () => void
  readonly onTrimmed?: () => void
}

/** What a node tells the operator, on standard error, as it happens. */
function nodeReports(io: CliIo): Required<Pick<ClusterOptions, 'onError' | 'onFailure' | 'onRefused' | 'onResent'>> {
  const line = (text: string): void => void io.stderr.write(`${text}\n`)
  return {
    onError: (err) => line(`following the stream failed, retrying: ${err instanceof Error ? err.message : String(err)}`),
    onFailure: (err) => line(`this node stopped applying the stream [${err.code}]: ${err.message}`),
    onRefused: (refused) => line(`refused the commit at position ${refused.position} of the stream [${refused.code}]: ${refused.message}`),
    onResent: (resent) => line(describeResent(resent)),
  }
}

/** The id a served node has unless `--node-id` says otherwise: its host and database, the same across restarts. */
export function defaultNodeId(location: string): string {
  return nodeIdOf(`${hostname()}:${resolve(location)}`)
}
