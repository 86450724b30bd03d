/**
 * `serve --nats` replacing its store, by itself, with one rebuilt from the
 * stream (from the newest usable snapshot, else from the stream's first
 * commit: src/cluster/rebuild.ts): when the store forked from the stream,
 * when retention removed the commits after its position, and when a new node
 * starts empty while the stream's bucket holds snapshots (docs/cluster.md).
 */
import { isTrimmedPast } from '../cluster/applier.js'
import { installRebuilt, isForkedFromStream, rebuildFromStream, rebuildPathOf } from '../cluster/rebuild.js'
import { listSnapshots } from '../cluster/snapshots.js'
import { isPriceStoreError } from '../errors.js'
import type { PriceStore } from '../store/price-store.js'
import type { ClusterNode } from '../cluster/cluster-node.js'
import type { ClusterOptions } from '../cluster/cluster-options.js'
import { startClusterNode, type ClusterFlags } from './cluster-flags.js'
import type { StoreConfig } from './config.js'
import type { CliIo } from './io.js'
import { openStore } from './open-store.js'
import { formatCount } from './progress.js'

/** How often the rebuild's progress is written to standard error at most (ms). */
const PROGRESS_LOG_EVERY_MS = 5_000

/**
 * Puts in place a rebuild a killed process finished but did not install, and removes one it did not finish. Call it
 * before opening the store.
 */
export async function finishRebuild(location: string, io: CliIo): Promise<void> {
  if (await installRebuilt(location)) io.stderr.write(`put in place the store rebuilt from the stream at ${rebuildPathOf(location)}\n`)
}

/** The store's error behind a failure to start: the error itself, or the cause the CLI wrapped it around. */
function storeErrorOf(err: unknown): unknown {
  return err instanceof Error && !isPriceStoreError(err) ? err.cause : err
}

/**
 * Whether a failure to start says the store is to be replaced by one rebuilt from the stream: it forked from the
 * stream (which holds every record it holds), or it is only behind a stream that retention trimmed (a snapshot
 * replaces it).
 */
export function rebuildableAtStart(err: unknown): boolean {
  const cause = storeErrorOf(err)
  return isForkedFromStream(cause) || isTrimmedPast(cause)
}

/**
 * Builds, beside the store, a store that applied the stream (from a snapshot, or from its first commit), with the
 * store's own provider and options, logging its progress; the store goes on serving meanwhile. Close the store, then {@link finishRebuild}.
 * @returns whether the rebuild is complete (a failure is logged: the node stays as it was, failed)
 */
export async function rebuildServedStore(store: PriceStore, config: StoreConfig, cluster: ClusterOptions, io: CliIo, serving: boolean): Promise<boolean> {
  const { name, id, publicKey } = store.provider
  const location = config.location
  io.stderr.write(`rebuilding this node's store from the stream at ${rebuildPathOf(location)}${serving ? ', while it serves what it holds' : ' before it serves'}...\n`)
  let logged = 0
  try {
    const done = await rebuildFromStream(location, {
      open: (path) => openStore({ ...config, location: path, provider: { name, id, publicKey } }, { mustExist: false, retention: true }),
      cluster,
      onSnapshotSkipped: (snapshot, reason) => io.stderr.write(`  passed over the snapshot ${snapshot.name}: ${reason.message}\n`),
      onProgress: ({ position, target }) => {
        if (Date.now() - logged < PROGRESS_LOG_EVERY_MS) return
        logged = Date.now()
        io.stderr.write(`  rebuilding: applied up to position ${formatCount(position)} of ${formatCount(target)}\n`)
      },
    })
    const from = done.snapshot === undefined ? '' : ` (from the snapshot ${done.snapshot.name}, at position ${formatCount(done.snapshot.position)})`
    io.stderr.write(`rebuilt from the stream up to position ${formatCount(done.position)}${from}: putting it in place\n`)
    return true
  } catch (err) {
    io.stderr.write(`rebuilding from the stream failed; this node stays stopped (re-seed it from a backup): ${err instanceof Error ? err.message : String(err)}\n`)
    return false
  }
}

/** A node of `serve --nats` on its store, and what resolves when its store is to be rebuilt. */
export interface ServedNode {
  readonly store: PriceStore
  readonly node: ClusterNode
  /**
   * Resolves with {@link FORKED} once the node found its store forked from the stream, or behind what the stream
   * still holds (it applies nothing more): its store is to be rebuilt.
   */
  readonly forked: Promise<typeof FORKED>
}

/** What the operator reads when the node's store forked. */
const FORKED_LINE = 'this node\'s store forked from the stream (other writes took the positions of commits the stream lost; this node sent its own again): it is rebuilt from the stream\n'

const TRIMMED_LINE = 'the stream no longer holds the commits after this node\'s position (retention): its store is rebuilt from the newest snapshot the stream follows on from\n'

/** Whether the stream's bucket holds snapshots (a failure to list them is logged, and counts as none). */
async function hasSnapshots(cluster: ClusterOptions, io: CliIo): Promise<boolean> {
  try {
    return (await listSnapshots(cluster, cluster.stream === undefined ? {} : { stream: cluster.stream })).length > 0
  } catch (err) {
    io.stderr.write(`could not list the stream's snapshots, starting from the stream: ${err instanceof Error ? err.message : String(err)}\n`)
    return false
  }
}

/** What {@link ServedNode.forked} resolves with. */
export const FORKED = Symbol('forked')

/**
 * Starts the node on the store; a store that forked from the stream while the node was down is rebuilt from the
 * stream and replaces it first (the store given is closed then, and the one returned is open).
 */
export async function startServedNode(store: PriceStore, config: StoreConfig, flags: ClusterFlags, io: CliIo): Promise<ServedNode> {
  const cluster = flags.options
  // A new node (an empty store) starts from the newest snapshot of the stream's bucket when there is one.
  let rebuilt = false
  if (cluster !== undefined && store.position === 0 && await hasSnapshots(cluster, io)) {
    io.stderr.write('a new node: its store is seeded from the newest snapshot the stream follows on from\n')
    if (await rebuildServedStore(store, config, cluster, io, false)) {
      store = await reopenRebuilt(store, config, io)
      rebuilt = true
    }
  }
  for (;;) {
    let notice = (): void => {}
    const forked = new Promise<typeof FORKED>((resolve) => (notice = () => resolve(FORKED)))
    const noticed = (line: string) => (): void => {
      io.stderr.write(line)
      notice()
    }
    try {
      const node = await startClusterNode(store, flags, config.location, io, { onForked: noticed(FORKED_LINE), onTrimmed: noticed(TRIMMED_LINE) })
      return { store, node, forked }
    } catch (err) {
      // Once only: a store rebuilt from the stream that cannot follow it at once is a fault to report, not to loop on.
      const rebuildable = cluster !== undefined && !rebuilt && rebuildableAtStart(err)
      if (rebuildable) io.stderr.write(isForkedFromStream(storeErrorOf(err)) ? FORKED_LINE : TRIMMED_LINE)
      if (!rebuildable || !(await rebuildServedStore(store, config, cluster, io, false))) {
        if (rebuilt) await store.close()
        throw err
      }
      store = await reopenRebuilt(store, config, io)
      rebuilt = true
    }
  }
}

/** Closes the store, puts the rebuilt one in its place and opens it. */
export async function reopenRebuilt(store: PriceStore, config: StoreConfig, io: CliIo): Promise<PriceStore> {
  await store.close()
  await finishRebuild(config.location, io)
  return openStore(config, { mustExist: false, retention: true })
}
