/**
 * `price-store serve --nats` nodes whose stores forked from the stream rebuild themselves from it,
 * with no operator: a real nats-server 2.9.10 comes back without the last two commits it
 * acknowledged (its message files cut while it is stopped: support/stream-files.ts), and a new node
 * writes at their positions while the three nodes that hold them are away:
 * - one was stopped: started again, it sends its lost commits again, is refused as forked, and
 *   rebuilds its store from the stream before it listens; killed (SIGKILL) during that rebuild and
 *   started again, it finishes or starts over, and serves;
 * - one was frozen (SIGSTOP): resumed, it finds the loss while it runs, sends the commits again,
 *   finds its history forked, rebuilds beside the store it goes on serving, swaps, and listens
 *   again on its port;
 * - one was stopped and comes back last, finding everything sent already.
 * Then all four nodes take writes and hold the same records: every acknowledged batch, and none
 * that no writer sent (support/cluster-checks.ts). The order of the steps fixes every outcome;
 * every wait is for an observable state.
 */
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { checkNodesAgree, waitConverged } from './support/cluster-checks.js'
import { ClusterWriter } from './support/cluster-writer.js'
import { startFaultCluster, type FaultCluster } from './support/fault-cluster.js'
import { NATS_SKIP_REASON, natsServerPath, type NatsCluster } from './support/nats-cluster.js'
import { eventually, type NodeProcess } from './support/node-process.js'
import { recordWriterRun } from './support/soak-findings.js'
import { blockSizes, cutBlocksTo, messagesDir } from './support/stream-files.js'

const STREAM = 'SERVE_REBUILD'

describe.skipIf(!natsServerPath())(`serve nodes whose stores forked from the stream rebuild themselves ${natsServerPath() ? '' : NATS_SKIP_REASON}`, () => {
  let cluster: FaultCluster | undefined
  let nats: NatsCluster | undefined
  let nodes: readonly NodeProcess[] = []

  beforeAll(async () => {
    cluster = await startFaultCluster({ name: 'serve-rebuild', stream: STREAM, servers: 1, nodes: ['a', 'b', 'c', 'd'], start: false })
    ;({ nats, nodes } = cluster)
  }, 120_000)

  afterAll(async () => {
    await cluster?.close()
  })

  it('a stopped node, a frozen one and a late one each rebuild from the stream and hold every acknowledged write', async () => {
    const [a, b, c, d] = nodes as [NodeProcess, NodeProcess, NodeProcess, NodeProcess]
    const context = (): string => nodes.map((node) => node.output()).join('\n')
    await a.start()
    await Promise.all([b.start(), c.start()])
    const writer = new ClusterWriter(() => [a, b, c].filter((node) => node.serving).map((node) => node.url))
    await writer.writeMany(2)
    await waitConverged([a, b, c], nats!.urls, STREAM)
    // The server stops (writing everything out) so that its files' lengths at this point are known.
    const files = messagesDir(join(nats!.dir, 'n0', 'js'), STREAM)
    await nats!.kill(0, 'SIGTERM')
    const kept = await blockSizes(files)
    await nats!.start(0)
    await writer.writeMany(2)
    const held = await waitConverged([a, b, c], nats!.urls, STREAM)

    // The three nodes away, the server comes back without the last two commits, and a new node writes at their positions.
    await Promise.all([a.stop(), c.stop()])
    b.pause()
    await nats!.kill(0, 'SIGTERM')
    await cutBlocksTo(files, kept)
    await nats!.start(0)
    const back = Date.now()
    await d.start()
    const taken = await writer.writeNext({ targets: () => [d.url] })
    expect(taken.state, taken.errors.join('\n')).toBe('acked')
    expect(taken.position).toBeLessThanOrEqual(held) // a position the three nodes hold another commit at

    b.resume()
    // a is killed (SIGKILL) once its rebuild began, wherever in it the kill lands, and started again.
    const interrupted = a.start().catch((err: unknown) => err)
    await eventually('a rebuilding its store', async () => (a.output().includes('rebuilding this node\'s store') ? true : undefined), context)
    await a.kill()
    await interrupted
    await a.start()
    await eventually('b rebuilt its store while it ran, and applies the stream again', async () => {
      const replication = await b.replication()
      return replication.state === 'applying' && replication.forked !== true && b.output().includes('serving the rebuilt store') ? true : undefined
    }, context, 90_000)
    await c.start()
    writer.targets = () => [a, b, c, d].map((node) => node.url)
    await writer.writeMany(4)
    const recoveryMs = writer.firstAckAfter(back) ?? -1
    await waitConverged(nodes, nats!.urls, STREAM)
    const states = await Promise.all(nodes.map(async (node) => (await node.replication()).state))
    await recordWriterRun('stream lost its tail, a write took the positions first (serve nodes rebuild)', writer, {
      following: nodes, stopped: states.filter((state) => state === 'failed').length, recoveryMs,
    })
    expect(states).toEqual(['applying', 'applying', 'applying', 'applying'])
    expect(writer.failed()).toEqual([])
    await checkNodesAgree(nodes, writer)
    // A kill after a's rebuild was complete and before it said so leaves the install to the next start.
    for (const node of [a, b, c]) expect(node.output(), node.name).toMatch(/rebuilt from the stream up to position \d+|put in place the store rebuilt from the stream/)
    expect(a.output()).toMatch(/store forked from the stream .* it is rebuilt from the stream/)
  }, 240_000)
})
