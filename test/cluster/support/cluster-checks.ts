/**
 * The checks every fault scenario ends with (issue 21, "Tests"):
 * - {@link waitConverged}: every node reaches the stream's last commit (read from JetStream itself,
 *   so a failed batch that did land counts too), and the stream does not move meanwhile;
 * - {@link checkNodesAgree}: the nodes' exports (`GET /prices/export`) are equal byte for byte, every
 *   acknowledged batch is in them whole and exactly as written, a failed batch is whole or absent
 *   (so, the exports being equal, everywhere or nowhere), and nothing else is there.
 * - {@link waitSettled} and {@link batchesLostByStream}, for the one fault where JetStream itself may
 *   lose what it acknowledged (the whole NATS cluster restarted): every node either follows the stream
 *   to its end or stopped with `PRICE_REPLICA_DIVERGED`, and the acknowledged batches the stream no
 *   longer holds at their positions are known, read from the stream itself.
 */
import { JetStreamApiCodes, JetStreamApiError, jetstreamManager, type JetStreamManager, type StoredMsg } from '@nats-io/jetstream'
import { connect } from '@nats-io/transport-node'
import { expect } from 'vitest'
import { decodeCommit, decodeEntry } from '../../../src/cluster/batch-codec.js'
import { TEST_PROVIDER } from '../../../src/testing/records.js'
import { expected } from '../../support/records.js'
import type { ClusterWriter } from './cluster-writer.js'
import { eventually, type NodeProcess, type NodeReplication } from './node-process.js'

/**
 * Bounds {@link waitConverged}; only a failure takes this long. A node must catch up within it once the
 * fault is over: NATS elects a new stream leader in 4-16 s here, and a node that follows a live stream
 * applies hundreds of batches a second, so a node still behind after a minute is stuck, not slow.
 */
export const CONVERGE_DEADLINE_MS = 60_000

/** The stream's last sequence, asked of JetStream (one server of `natsUrls` answering is enough). */
export async function streamLastSequence(natsUrls: readonly string[], stream: string): Promise<number> {
  const nc = await connect({ servers: [...natsUrls], timeout: 2_000, maxReconnectAttempts: 0 })
  try {
    const jsm = await jetstreamManager(nc, { timeout: 2_000 })
    return (await jsm.streams.info(stream)).state.last_seq
  } finally {
    await nc.close()
  }
}

/** The `server_name` of the server leading the stream now, or undefined while none does (JetStream is electing one). */
export async function streamLeaderName(natsUrls: readonly string[], stream: string): Promise<string | undefined> {
  const nc = await connect({ servers: [...natsUrls], timeout: 2_000, maxReconnectAttempts: 0 })
  try {
    const jsm = await jetstreamManager(nc, { timeout: 2_000 })
    return (await jsm.streams.info(stream)).cluster?.leader || undefined
  } finally {
    await nc.close()
  }
}

/**
 * Resolves with the position every node reached once each one reports (in `/health`) the stream's last
 * sequence as its position, and the stream still ends there afterwards (a batch whose publish failed
 * at the writer can still land late: then this waits for that one too).
 */
export async function waitConverged(nodes: readonly NodeProcess[], natsUrls: readonly string[], stream: string, deadlineMs = CONVERGE_DEADLINE_MS): Promise<number> {
  const context = (): string => nodes.map((node) => node.output()).join('\n')
  return eventually('every node at the stream\'s last commit', async () => {
    const last = await streamLastSequence(natsUrls, stream)
    const positions = await Promise.all(nodes.map(async (node) => (await node.replication()).position))
    if (positions.some((position) => position !== last)) throw new Error(`stream at ${last}, nodes at ${positions.join(', ')}`)
    return (await streamLastSequence(natsUrls, stream)) === last ? last : undefined
  }, context, deadlineMs)
}

/** The nodes after a fault, split by whether they follow the stream or stopped on an error. */
export interface SettledNodes {
  readonly following: NodeProcess[]
  readonly failed: { readonly node: NodeProcess; readonly code: string; readonly message: string; readonly position: number }[]
}

/**
 * Resolves once every node either reports the stream's last sequence as its position (as
 * {@link waitConverged}) or reports `failed`, and the stream still ends there afterwards. A node that failed on a
 * fork (`forked` in `/health`) is not settled: `serve --nats` rebuilds its store from the stream, and it follows on.
 */
export async function waitSettled(nodes: readonly NodeProcess[], natsUrls: readonly string[], stream: string, deadlineMs = CONVERGE_DEADLINE_MS): Promise<SettledNodes> {
  const context = (): string => nodes.map((node) => node.output()).join('\n')
  return eventually('every node at the stream\'s last commit, or failed', async () => {
    const last = await streamLastSequence(natsUrls, stream)
    const states = await Promise.all(nodes.map(async (node) => ({ node, replication: await node.replication() })))
    const stopped = ({ replication }: { replication: NodeReplication }): boolean => replication.state === 'failed' && replication.forked !== true
    const behind = states.filter((state) => !stopped(state) && state.replication.position !== last)
    if (behind.length > 0) throw new Error(`stream at ${last}, nodes at ${states.map(({ replication }) => `${replication.position} (${replication.state})`).join(', ')}`)
    if ((await streamLastSequence(natsUrls, stream)) !== last) return undefined
    return {
      following: states.filter((state) => !stopped(state)).map(({ node }) => node),
      failed: states.filter(stopped).map(({ node, replication }) => ({
        node, code: replication.error?.code ?? '', message: replication.error?.message ?? '', position: replication.position,
      })),
    }
  }, context, deadlineMs)
}

/**
 * Resolves once `count` more writes were acknowledged after a fault, or once `stopped` nodes stopped (a node that
 * had applied a position the stream rewrote stops; past enough of them no write can be taken).
 */
export async function waitWritesOrStopped(writer: ClusterWriter, nodes: readonly NodeProcess[], count: number, stopped: number): Promise<void> {
  const from = writer.acked().length
  await eventually(`${count} writes acknowledged, or ${stopped} nodes stopped`, async () => {
    if (writer.acked().length >= from + count) return true
    const states = await Promise.all(nodes.map((node) => node.replication()))
    return states.filter((replication) => replication.state === 'failed').length >= stopped ? true : undefined
  }, () => nodes.map((node) => node.output()).join('\n'), 120_000)
}

/**
 * Checks that every node that stopped did so on a fork, as docs/cluster.md says a node does when the stream gave a
 * position it had applied to another commit: `PRICE_REPLICA_DIVERGED`, and `/health` saying what it sent again.
 */
export async function expectForks(failed: SettledNodes['failed']): Promise<void> {
  for (const { node, code, message } of failed) {
    expect(code, `node ${node.name}: ${message}`).toBe('PRICE_REPLICA_DIVERGED')
    await eventually(`node ${node.name} saying what it sent again`, async () => ((await node.replication()).resent !== undefined ? true : undefined), () => node.output())
  }
}

/**
 * The acknowledged batches the stream no longer holds at the position it acknowledged them with: the message
 * there is gone, or carries other records. Read from JetStream itself, independently of any node.
 */
export async function batchesLostByStream(natsUrls: readonly string[], stream: string, writer: ClusterWriter): Promise<Set<number>> {
  const nc = await connect({ servers: [...natsUrls], timeout: 5_000, maxReconnectAttempts: 0 })
  const lost = new Set<number>()
  try {
    const jsm = await jetstreamManager(nc, { timeout: 5_000 })
    for (const outcome of writer.acked()) {
      const message = await messageAt(jsm, stream, outcome.position!)
      const decoded = message === null ? undefined : decodeCommit(message.data)
      // The writer's batches are small enough to go inline: a commit of parts is another batch than this one.
      const batches = decoded?.kind === 'inline' ? new Set(decodeEntry(decoded.entry, TEST_PROVIDER, 'check').map((record) => writer.batchOf(record))) : undefined
      if (batches?.size !== 1 || !batches.has(outcome.n)) lost.add(outcome.n)
    }
  } finally {
    await nc.close()
  }
  return lost
}

/** The message id (`Nats-Msg-Id`) of the stream's message at `position`, or undefined when it holds none there. */
export async function streamMessageId(natsUrls: readonly string[], stream: string, position: number): Promise<string | undefined> {
  const nc = await connect({ servers: [...natsUrls], timeout: 5_000, maxReconnectAttempts: 0 })
  try {
    const jsm = await jetstreamManager(nc, { timeout: 5_000 })
    return (await messageAt(jsm, stream, position))?.header?.get('Nats-Msg-Id') || undefined
  } finally {
    await nc.close()
  }
}

/** The stream's message at `position`, or null when it holds none there (any other failure throws). */
async function messageAt(jsm: JetStreamManager, stream: string, position: number): Promise<StoredMsg | null> {
  try {
    return await jsm.streams.getMessage(stream, { seq: position })
  } catch (err) {
    if (err instanceof JetStreamApiError && err.code === JetStreamApiCodes.NoMessageFound) return null
    throw err
  }
}

/** The parsed lines of an NDJSON export. */
function parseExport(text: string): Record<string, unknown>[] {
  return text.split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as Record<string, unknown>)
}

/**
 * Checks the nodes hold the same records, byte for byte, and that these are what `writer` was told:
 * every acknowledged batch whole and exact, every failed batch whole or absent, no other record.
 * Returns the number of records each holds.
 * @param lostByStream acknowledged batches the stream itself lost ({@link batchesLostByStream}): they must be absent
 */
export async function checkNodesAgree(nodes: readonly NodeProcess[], writer: ClusterWriter, lostByStream: ReadonlySet<number> = new Set()): Promise<number> {
  const exports = await Promise.all(nodes.map(async (node) => {
    const { status, body } = await node.get('/prices/export')
    expect(status, `node ${node.name}'s export: ${body.slice(0, 300)}`).toBe(200)
    return body
  }))
  const [first = ''] = exports
  for (const [i, text] of exports.entries()) {
    // Not toBe on megabytes of text: a failure would print both whole.
    if (text !== first) {
      const a = parseExport(first)
      const b = parseExport(text)
      const at = a.findIndex((record, k) => JSON.stringify(record) !== JSON.stringify(b[k]))
      expect.fail(`node ${nodes[i]!.name}'s export differs from node ${nodes[0]!.name}'s: ${b.length} vs ${a.length} records, first difference at line ${at}: ${JSON.stringify(b[at])} vs ${JSON.stringify(a[at])}`)
    }
  }
  const records = parseExport(first)
  const byBatch = new Map<number, Record<string, unknown>[]>()
  for (const record of records) {
    const n = writer.batchOf(record as { timestamp: number })
    let list = byBatch.get(n)
    if (list === undefined) byBatch.set(n, (list = []))
    list.push(record)
  }
  for (const [n, list] of byBatch) {
    expect(n >= 0 && n < writer.sent, `batch ${n} is stored but was never sent`).toBe(true)
    const outcome = writer.outcomes.get(n)
    expect(outcome, `batch ${n} is stored while still in flight: the scenario must wait for its writers`).toBeDefined()
    // Whole (acknowledged or failed alike): a batch is applied whole or not at all.
    expect(list.length, `batch ${n} (${outcome!.state}) is stored in part`).toBe(writer.batchSize)
  }
  const sortKey = (record: Record<string, unknown>): string => `${String(record.symbol)}\0${String(record.timestamp).padStart(16, '0')}`
  for (const outcome of writer.acked()) {
    const stored = byBatch.get(outcome.n)
    if (lostByStream.has(outcome.n)) {
      expect(stored, `acknowledged batch ${outcome.n}, which the stream lost, is held by nodes that go on following the stream`).toBeUndefined()
      continue
    }
    expect(stored?.length ?? 0, `acknowledged batch ${outcome.n} (position ${outcome.position}) is missing`).toBe(writer.batchSize)
    const want = writer.records(outcome.n).map((record) => expected(record)).sort((a, b) => sortKey(a).localeCompare(sortKey(b)))
    const got = [...stored!].sort((a, b) => sortKey(a).localeCompare(sortKey(b)))
    expect(got, `acknowledged batch ${outcome.n}'s records`).toEqual(want)
  }
  return records.length
}
