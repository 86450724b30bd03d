/**
 * A primary served over HTTP and a follower of it (`HttpFollowLog`), as the follow tests start
 * them, and a node of an in-memory log: each registers its stop in the test's cleanup list, run in
 * reverse after each test.
 */
import { MemoryLevel } from 'memory-level'
import { startServer, type RunningServer } from '../../../src/adapters/http/node.js'
import { ClusterNode, HttpFollowLog, type RefusedCommit } from '../../../src/cluster.js'
import { PriceStore } from '../../../src/index.js'
import type { SignatureOptions } from '../../../src/trust.js'
import type { Provider } from '../../../src/types.js'
import type { MemoryLog } from './memory-log.js'

/** Steps a test's `afterEach` runs, last first. */
export type CleanupSteps = (() => Promise<void>)[]

/** Serves `store` on a loopback port (0: a free one). */
export async function servePrimary(cleanup: CleanupSteps, store: PriceStore, port = 0): Promise<RunningServer> {
  const server = await startServer({ store, port })
  cleanup.push(() => server.close())
  return server
}

/** Makes `store` a read copy of the primary at `url`, answering writes at once (no wait for its own apply). */
export async function followPrimary(cleanup: CleanupSteps, store: PriceStore, url: string): Promise<ClusterNode> {
  const node = await ClusterNode.follow(store, new HttpFollowLog(url, store.provider), { applyWaitMs: 0 })
  cleanup.push(() => node.stop())
  return node
}

/** A store of `provider` following an in-memory log, and the commits it refused. */
export interface MemoryLogNode {
  readonly store: PriceStore
  readonly node: ClusterNode
  readonly refused: RefusedCommit[]
}

/** Opens a store of `provider` (with `signatures` when given) on memory-level and makes it a node of `log`, applying at once. */
export async function followMemoryLog(cleanup: CleanupSteps, log: MemoryLog, provider: Provider, signatures: SignatureOptions | undefined): Promise<MemoryLogNode> {
  const store = await PriceStore.open(new MemoryLevel(), { provider, ...(signatures === undefined ? {} : { signatures }) })
  cleanup.push(() => store.close())
  const refused: RefusedCommit[] = []
  const conn = log.connect()
  const node = await ClusterNode.follow(store, conn, { applyWaitMs: 0, adoptEmptyStream: true, onRefused: (r) => refused.push(r) })
  cleanup.push(async () => {
    await node.stop()
    await conn.close()
  })
  return { store, node, refused }
}
