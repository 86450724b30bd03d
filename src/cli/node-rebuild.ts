/**
 * `serve --nats` replacing a store that forked from its stream with one
 * rebuilt from the stream, by itself (see src/cluster/rebuild.ts and
 * docs/cluster.md, "When the stream loses acknowledged writes").
 */
import { installRebuilt, isForkedFromStream, rebuildFromStream, rebuildPathOf } from '../cluster/rebuild.js'
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

/** Whether a failure to start says the store forked from its stream (and so can be rebuilt from it). */
export function forkedAtStart(err: unknown): boolean {
  return isForkedFromStream(err) || (err instanceof Error && isForkedFromStream(err.cause))
}

/**
 * Builds, beside the store, a store that applied the stream from its first commit, with the store's own provider and
 * options, logging its progress; the store goes on serving meanwhile. Close the store, then {@link finishRebuild}.
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
      onProgress: ({ position, target }) => {
        if (Date.now() - logged < PROGRESS_LOG_EVERY_MS) return
        logged = Date.now()
        io.stderr.write(`  rebuilding: applied up to position ${formatCount(position)} of ${formatCount(target)}\n`)
      },
    })
    io.stderr.write(`rebuilt from the stream up to position ${formatCount(done.position)}: putting it in place\n`)
    return true
  } catch (err) {
    io.stderr.write(`rebuilding from the stream failed; this node stays stopped (re-seed it from a backup): ${err instanceof Error ? err.message : String(err)}\n`)
    return false
  }
}

/** A node of `serve --nats` on its store, and what resolves when its store forks from the stream. */
export interface ServedNode {
  readonly store: PriceStore
  readonly node: ClusterNode
  /** Resolves with {@link FORKED} once the node found its store forked from the stream (it applies nothing more). */
  readonly forked: Promise<typeof FORKED>
}

/** What the operator reads when the node's store forked. */
const FORKED_LINE = 'this node\'s store forked from the stream (other writes took the positions of commits the stream lost; this node sent its own again): it is rebuilt from the stream\n'

/** What {@link ServedNode.forked} resolves with. */
export const FORKED = Symbol('forked')

/**
 * Starts the node on the store; a store that forked from the stream while the node was down is rebuilt from the
 * stream and replaces it first (the store given is closed then, and the one returned is open).
 */
export async function startServedNode(store: PriceStore, config: StoreConfig, flags: ClusterFlags, io: CliIo): Promise<ServedNode> {
  for (let rebuilt = false; ; rebuilt = true) {
    let notice = (): void => {}
    const forked = new Promise<typeof FORKED>((resolve) => (notice = () => resolve(FORKED)))
    try {
      const node = await startClusterNode(store, flags, config.location, io, () => {
        io.stderr.write(FORKED_LINE)
        notice()
      })
      return { store, node, forked }
    } catch (err) {
      // Once only: a store rebuilt from the stream that forks at once is a fault to report, not to loop on.
      const rebuildable = flags.options !== undefined && !rebuilt && forkedAtStart(err)
      if (rebuildable) io.stderr.write(FORKED_LINE)
      if (!rebuildable || !(await rebuildServedStore(store, config, flags.options, io, false))) {
        if (rebuilt) await store.close()
        throw err
      }
      store = await reopenRebuilt(store, config, io)
    }
  }
}

/** Closes the store, puts the rebuilt one in its place and opens it. */
export async function reopenRebuilt(store: PriceStore, config: StoreConfig, io: CliIo): Promise<PriceStore> {
  await store.close()
  await finishRebuild(config.location, io)
  return openStore(config, { mustExist: false, retention: true })
}
