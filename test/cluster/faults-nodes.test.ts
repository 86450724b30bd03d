/**
 * Faults of price-store nodes (issue 21): three `price-store serve --nats` processes on one R3 stream
 * of a 3-server JetStream cluster, written to by clients that retry. A node killed with SIGKILL while
 * it applies the stream restarts where its store stopped and catches up; a node frozen with SIGSTOP
 * while the others take hundreds of batches catches up once resumed. After each fault every node
 * reaches the stream's last commit and the nodes' exports are equal byte for byte, holding every
 * acknowledged batch exactly and every failed one whole or not at all
 * (support/cluster-checks.ts). Then the three nodes answer every query form the same, byte for byte.
 *
 * The scenarios run in order on the same cluster and stream (each one's checks cover everything
 * written so far). Nothing waits for time to pass: every wait is for an observable condition.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { T0 } from '../../src/testing/records.js'
import { checkNodesAgree, waitConverged } from './support/cluster-checks.js'
import { ClusterWriter, WRITER_SYMBOLS } from './support/cluster-writer.js'
import { startFaultCluster, type FaultCluster } from './support/fault-cluster.js'
import { NATS_SKIP_REASON, natsServerPath, type NatsCluster } from './support/nats-cluster.js'
import { eventually, type NodeProcess } from './support/node-process.js'
import { recordWriterRun } from './support/soak-findings.js'

const STREAM = 'FAULTS_NODES'
/** Bounds a whole scenario; only a failure takes this long. */
const SCENARIO_TIMEOUT_MS = 120_000

describe.skipIf(!natsServerPath())(`price-store nodes killed or frozen while writes go on (3 NATS servers, R3) ${natsServerPath() ? '' : NATS_SKIP_REASON}`, () => {
  let cluster: FaultCluster | undefined
  let nats: NatsCluster | undefined
  let nodes: readonly NodeProcess[] = []
  let writer: ClusterWriter
  const context = (): string => cluster?.context() ?? ''

  beforeAll(async () => {
    cluster = await startFaultCluster({ name: 'faults-nodes', stream: STREAM })
    ;({ nats, nodes, writer } = cluster)
  }, 120_000)

  afterAll(async () => {
    await cluster?.close()
  })

  it('a node killed with SIGKILL while it applies restarts where it stopped and catches up', async () => {
    const [a, , c] = nodes as [NodeProcess, NodeProcess, NodeProcess]
    let phase: 'before' | 'down' | 'catching up' | 'done' = 'before'
    const writing = writer.writeUntil(() => phase === 'done', 3)
    let restartedAt = 0
    try {
      // The kill lands while c applies: batches flow and c has applied some.
      await eventually('c applying the stream', async () => ((await c.replication()).appliedBatches >= 10 && writer.acked().length >= 10 ? true : undefined), context)
      await c.kill()
      phase = 'down'
      const ackedAtKill = writer.acked().length
      await eventually('writes acknowledged while c is down', async () => (writer.acked().length >= ackedAtKill + 20 ? true : undefined), context)
      await c.start()
      restartedAt = Date.now()
      phase = 'catching up'
      const ackedAtRestart = writer.acked().length
      await eventually('writes acknowledged while c catches up, one of them by c', async () =>
        (writer.acked().length >= ackedAtRestart + 10 && writer.firstAckAfter(restartedAt, c.url) !== undefined ? true : undefined), context)
    } finally {
      phase = 'done'
      await writing
    }
    const position = await waitConverged(nodes, nats!.urls, STREAM)
    await recordWriterRun('a node killed (SIGKILL) while it applies', writer, { following: nodes, stopped: 0, recoveryMs: writer.firstAckAfter(restartedAt, c.url) })
    expect(position).toBeGreaterThanOrEqual(writer.newestAckedPosition())
    expect(writer.failed(), 'a batch that failed after all its retries').toEqual([])
    await checkNodesAgree(nodes, writer)
    // The restarted node resumed from its store's position: it did not apply the whole stream again.
    expect((await c.replication()).appliedBatches).toBeLessThan(position)
    expect(a.running).toBe(true)
  }, SCENARIO_TIMEOUT_MS)

  it('a node frozen with SIGSTOP while hundreds of batches are written catches up once resumed', async () => {
    const [, b] = nodes as [NodeProcess, NodeProcess, NodeProcess]
    const before = await waitConverged(nodes, nats!.urls, STREAM)
    const bAtPause = (await b.replication()).position
    b.pause()
    const others = (): string[] => nodes.filter((node) => node !== b && node.serving).map((node) => node.url)
    writer.targets = others
    try {
      await writer.writeMany(300, 4)
    } finally {
      b.resume()
      writer.targets = cluster!.serving
    }
    const resumedAt = Date.now()
    // A reader that names the newest write's position is answered by the node that was behind once it
    // applied it (it may say HTTP_POSITION_NOT_REACHED first, as it tells clients: retry).
    const latestQuery = `/prices?symbols=${WRITER_SYMBOLS.join(',')}&minPosition=${writer.newestAckedPosition()}`
    const read = await eventually('a read at the newest position on b', async () => {
      const answer = await b.get(latestQuery)
      if (answer.status === 503 && answer.body.includes('HTTP_POSITION_NOT_REACHED')) return undefined
      return answer
    }, context)
    // Nothing is written between the two reads: a answers at the same position.
    const readOnA = await nodes[0]!.get(latestQuery)
    // The frozen node takes a write again (its write concern counts itself: it applied what it missed).
    await writer.writeNext({ targets: () => [b.url] })
    const position = await waitConverged(nodes, nats!.urls, STREAM)
    await recordWriterRun('a node frozen (SIGSTOP) while hundreds of batches are written', writer, { following: nodes, stopped: 0, recoveryMs: writer.firstAckAfter(resumedAt, b.url) })
    expect(writer.failed()).toEqual([])
    expect(read.status, read.body).toBe(200)
    expect(position).toBeGreaterThanOrEqual(before + 301)
    expect((await b.replication()).position).toBe(position)
    expect(bAtPause).toBe(before)
    expect(read.body, 'a read at the newest position on the node that was behind').toBe(readOnA.body)
    await checkNodesAgree(nodes, writer)
  }, SCENARIO_TIMEOUT_MS)

  it('three nodes answer every query form the same, byte for byte', async () => {
    await waitConverged(nodes, nats!.urls, STREAM)
    const last = T0 + writer.sent * writer.batchSize * 1000
    const mid = T0 + Math.floor(writer.sent / 2) * writer.batchSize * 1000 + 500
    const queries = [
      '/prices?symbol=BTC',
      '/prices?symbol=ETH&limit=7&offset=3',
      '/prices?symbols=BTC,ETH,AR,SOL',
      '/prices',
      `/prices?symbols=BTC,ETH&toTimestamp=${mid}`,
      `/prices?symbol=AR&toTimestamp=${mid}`,
      `/prices?symbol=AR&fromTimestamp=${T0}&toTimestamp=${mid}&limit=50`,
      `/prices?symbol=BTC&fromTimestamp=${T0}&toTimestamp=${last}&interval=60000`,
      `/prices?symbol=SOL&fromTimestamp=${T0}&toTimestamp=${last}&interval=300000&aggregate=candles`,
      `/prices?symbol=ETH&fromTimestamp=${T0}&toTimestamp=${last}&interval=60000&fill=prev`,
      `/prices?symbol=AR&toTimestamp=${mid}&direction=nearest`,
      `/prices?symbols=BTC,SOL&fromTimestamp=${T0}&toTimestamp=${last}&aggregate=twap`,
      `/udf/history?symbol=BTC&resolution=1&from=${Math.floor(T0 / 1000)}&to=${Math.floor(last / 1000)}`,
    ]
    for (const query of queries) {
      const answers = await Promise.all(nodes.map((node) => node.get(query)))
      expect(answers[0]!.status, `${query}: ${answers[0]!.body.slice(0, 300)}`).toBe(200)
      for (const [i, answer] of answers.entries()) expect(answer, `${query} on node ${nodes[i]!.name}`).toEqual(answers[0])
    }
  }, SCENARIO_TIMEOUT_MS)
})
