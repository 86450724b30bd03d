/**
 * `serve --nats ...`: the flags that make the served store a node of a
 * cluster (price-store/cluster), and starting that node.
 */
import { ClusterNode } from '../cluster/cluster-node.js'
import type { ClusterOptions } from '../cluster/cluster-options.js'
import { HttpFollowLog } from '../cluster/http-follow-log.js'
import { isPriceStoreError } from '../errors.js'
import type { PriceStore } from '../store/price-store.js'
import { CliError, UsageError, parseIntegerOption } from './args.js'
import type { CliIo } from './io.js'

/** The flags, for `parseCommandArgs`. */
export const CLUSTER_FLAGS = {
  nats: { type: 'string' },
  follow: { type: 'string' },
  'nats-stream': { type: 'string' },
  'nats-replicas': { type: 'string' },
  'nats-max-age-days': { type: 'string' },
  'nats-max-bytes': { type: 'string' },
  'apply-wait-ms': { type: 'string' },
  'max-lag': { type: 'string' },
} as const

/** Their help text. */
export const CLUSTER_FLAGS_HELP = `Cluster (several nodes replicating one NATS JetStream stream; see docs/cluster.md):
  --nats URL[,URL...]         be a node of the cluster whose log is on these NATS servers: POST /prices
                              writes go to the stream, and every node (this one too) applies the stream
  --nats-stream NAME          the stream (default PRICES); created when missing, with:
  --nats-replicas N             servers holding each message (default 3 with three or more URLs, else 1)
  --nats-max-age-days N         stream retention by age (default none; nodes keep their own history)
  --nats-max-bytes N            stream retention by size (default none)
  --apply-wait-ms N           a write answers once this node applied it, or after N ms (default 5000; 0 = at
                              once after the stream acknowledged it)
  --max-lag N                 GET /health answers 503 while this node is more than N positions behind the stream
  --follow URL                instead of --nats: a read copy of one price-store server (its base URL), applying
                              its live stream at its positions; takes no writes (see docs/cluster.md)`

type Values = Readonly<Record<string, string | string[] | boolean | undefined>>

/** What the flags ask for: a node of a cluster on NATS, or a follower of one server; `maxLag` for the health check. */
export type ClusterFlags =
  | { readonly options: ClusterOptions; readonly follow?: undefined; readonly maxLag: number | undefined }
  | { readonly options?: undefined; readonly follow: string; readonly maxLag: number | undefined }

/** The cluster options the flags give, or `undefined` without `--nats` and `--follow`. */
export function parseClusterFlags(values: Values): ClusterFlags | undefined {
  const text = (name: keyof typeof CLUSTER_FLAGS): string | undefined => {
    const value = values[name]
    return typeof value === 'string' ? value : undefined
  }
  const servers = text('nats')
  const follow = text('follow')
  const maxLag = parseIntegerOption('max-lag', text('max-lag'), 0, Number.MAX_SAFE_INTEGER)
  if (follow !== undefined) {
    if (servers !== undefined) throw new UsageError('give --nats or --follow, not both')
    if (!/^https?:\/\/\S+$/.test(follow)) throw new UsageError(`--follow takes the base URL of a price-store server, e.g. http://primary:9000 (got ${JSON.stringify(follow)})`)
    const stray = Object.keys(CLUSTER_FLAGS).find((name) => !['follow', 'max-lag'].includes(name) && values[name] !== undefined)
    if (stray !== undefined) throw new UsageError(`--${stray} needs --nats (a follower takes its primary's positions and no writes)`)
    return { follow, maxLag }
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
  const stream = text('nats-stream')
  const options: ClusterOptions = {
    servers,
    name: 'price-store serve',
    ...(stream === undefined ? {} : { stream }),
    ...(replicas === undefined ? {} : { replicas }),
    ...(days === undefined ? {} : { maxAgeMs: days * 86_400_000 }),
    ...(maxBytes === undefined ? {} : { maxBytes }),
    ...(applyWaitMs === undefined ? {} : { applyWaitMs }),
  }
  return { options, maxLag }
}

/**
 * Starts the node (or follower) on the opened store.
 * @throws CliError saying what to do when NATS cannot be reached or the store cannot follow the stream
 */
export async function startClusterNode(store: PriceStore, flags: ClusterFlags, io: CliIo): Promise<ClusterNode> {
  const onError = (err: unknown): void => void io.stderr.write(`following the stream failed, retrying: ${err instanceof Error ? err.message : String(err)}\n`)
  try {
    if (flags.follow !== undefined) return await ClusterNode.follow(store, new HttpFollowLog(flags.follow, store.provider), { onError })
    return await ClusterNode.start(store, { ...flags.options, onError })
  } catch (err) {
    if (isPriceStoreError(err, 'PRICE_INVALID_OPTIONS')) throw new UsageError(`--nats: ${err.message}`)
    if (isPriceStoreError(err)) throw new CliError(`${err.message} [${err.code}]`, 1, { cause: err })
    throw err
  }
}
