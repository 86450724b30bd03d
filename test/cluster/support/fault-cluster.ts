/**
 * The cluster a process-level cluster test runs on: NATS servers (three by default, the stream on
 * every one of them) and price-store `serve` nodes on one stream, each a real process, with a
 * {@link ClusterWriter} writing through the nodes that serve. The first node creates the stream; the
 * others find it. A test that starts its nodes itself (in its own order, some late) says `start: false`.
 * `close()` (in afterAll) kills every process this started, by PID, and removes the folders.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { ChildBundle } from '../../reliability/child-process.js'
import { ClusterWriter } from './cluster-writer.js'
import { startNatsCluster, type NatsCluster, type NatsClusterOptions } from './nats-cluster.js'
import { NodeProcess, bundleCli, writeTokenFile, type NodeSetup } from './node-process.js'

/** What one node needs beyond the cluster's setup. */
export interface FaultNode {
  readonly name: string
  /** The NATS URLs this node is given, from the servers' (default: every server's). */
  readonly nats?: (servers: readonly string[]) => readonly string[] | Promise<readonly string[]>
  /** More `serve` flags for this node. */
  readonly extraArgs?: readonly string[]
}

export interface FaultClusterOptions {
  /** Names the NATS cluster and the temp folders. */
  readonly name: string
  readonly stream: string
  /** The nodes, started in this order (default a, b, c). */
  readonly nodes?: readonly (string | FaultNode)[]
  /** More `serve` flags for every node. */
  readonly extraArgs?: readonly string[]
  /** More options of the NATS servers. */
  readonly nats?: Omit<NatsClusterOptions, 'size' | 'name'>
  /** NATS servers, each holding a copy of the stream (default 3): a cluster of three, or one server. */
  readonly servers?: 1 | 3
  /** Whether the nodes are started here (default true): the first, then the others together. */
  readonly start?: boolean
}

export interface FaultCluster {
  readonly nats: NatsCluster
  readonly nodes: readonly NodeProcess[]
  readonly writer: ClusterWriter
  readonly stream: string
  /** The folder every node's database lies in (removed by `close()`). */
  readonly dir: string
  /** The URLs of the nodes running and listening now. */
  serving(): string[]
  /** Every node's stderr, for failure messages. */
  context(): string
  /** Starts one more node, on an empty database, with every server's URL and the cluster's flags. */
  addNode(name: string): Promise<NodeProcess>
  close(): Promise<void>
}

export async function startFaultCluster(options: FaultClusterOptions): Promise<FaultCluster> {
  let bundle: ChildBundle | undefined
  let nats: NatsCluster | undefined
  let dir: string | undefined
  let setup: NodeSetup | undefined
  let tokenFile = ''
  const nodes: NodeProcess[] = []
  const servers = options.servers ?? 3
  const close = async (): Promise<void> => {
    await Promise.all(nodes.map((node) => node.kill()))
    await nats?.close()
    await bundle?.cleanup()
    if (dir !== undefined) await rm(dir, { recursive: true, force: true })
  }
  try {
    ;[bundle, nats, dir] = await Promise.all([
      bundleCli(),
      startNatsCluster({ ...options.nats, size: servers, name: options.name }),
      mkdtemp(join(tmpdir(), `price-store-${options.name}-`)),
    ])
    setup = { bundle, dir, nats: nats.urls, stream: options.stream, replicas: servers, extraArgs: options.extraArgs ?? [] }
    tokenFile = await writeTokenFile(dir)
    for (const given of options.nodes ?? ['a', 'b', 'c']) {
      const node: FaultNode = typeof given === 'string' ? { name: given } : given
      const urls = node.nats === undefined ? nats.urls : await node.nats(nats.urls)
      nodes.push(new NodeProcess({ ...setup, nats: urls, extraArgs: [...options.extraArgs ?? [], ...node.extraArgs ?? []] }, tokenFile, node.name))
    }
    if (options.start !== false) {
      await nodes[0]!.start()
      await Promise.all(nodes.slice(1).map((node) => node.start()))
    }
  } catch (err) {
    await close()
    throw err
  }
  const serving = (): string[] => nodes.filter((node) => node.serving).map((node) => node.url)
  return {
    nats,
    nodes,
    writer: new ClusterWriter(serving),
    stream: options.stream,
    dir,
    serving,
    context: () => nodes.map((node) => node.output()).join('\n'),
    async addNode(name) {
      const node = new NodeProcess(setup!, tokenFile, name)
      nodes.push(node)
      await node.start()
      return node
    },
    close,
  }
}
