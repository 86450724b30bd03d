/**
 * Commits a node refuses: a message on the commit subject that it cannot
 * apply because of what it holds (bytes that are not a commit, records that
 * do not decode, another provider, bytes that do not hash to the commit's id,
 * parts that are another batch's) is passed over, counted and reported, and
 * the node goes on applying the commits after it. Every node gives the same
 * verdict (it depends on the message alone), so nodes stay identical, and a
 * restarted or new node passes over the same message again. On the in-memory
 * log; waits are for observable states (`waitForPosition`), bounded only to fail.
 */
import { MemoryLevel } from 'memory-level'
import { afterEach, describe, expect, it } from 'vitest'
import { appendBatch as appendValidated } from '../../src/cluster/append-batch.js'
import { batchIdOf, encodeBatch, encodePartsCommit } from '../../src/cluster/batch-codec.js'
import { ClusterNode, type RefusedCommit } from '../../src/cluster.js'
import { PriceStore, type PriceStoreError } from '../../src/index.js'
import { validateBatch } from '../../src/records/validate-batch.js'
import { resolveSignatureOptions, signatureRuleText } from '../../src/store/signatures/signature-options.js'
import { T0, TEST_PROVIDER, makeRecord, type InputRecord } from '../../src/testing/records.js'
import { MemoryLog, type MemoryLogConnection } from './support/memory-log.js'
import { exportedJson, modelExport, timedBatch } from './support/store-fixtures.js'

const APPLIED_WITHIN_MS = 10_000
const MAX_MESSAGE_BYTES = 4_096

const cleanup: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step()
})

interface Followed {
  readonly store: PriceStore
  readonly node: ClusterNode
  readonly refused: RefusedCommit[]
  readonly failures: PriceStoreError[]
}

async function follow(log: MemoryLog, db = new MemoryLevel()): Promise<Followed> {
  const store = await PriceStore.open(db, { provider: TEST_PROVIDER })
  cleanup.push(() => store.close())
  const refused: RefusedCommit[] = []
  const failures: PriceStoreError[] = []
  const node = await ClusterNode.follow(store, log.connect(), { applyWaitMs: 0, onRefused: (r) => refused.push(r), onFailure: (e) => failures.push(e) })
  cleanup.push(() => node.stop())
  return { store, node, refused, failures }
}

function writerOf(log: MemoryLog): MemoryLogConnection {
  const conn = log.connect()
  cleanup.push(() => conn.close())
  return conn
}

const records = timedBatch

const encoded = (batch: readonly InputRecord[]): ReturnType<typeof encodeBatch> =>
  encodeBatch(validateBatch(batch, TEST_PROVIDER), TEST_PROVIDER, MAX_MESSAGE_BYTES)

/** Appends a well-formed batch as a writer node would; its commit position. */
const appendBatch = (conn: MemoryLogConnection, batch: readonly InputRecord[]): Promise<number> =>
  appendValidated(conn, validateBatch(batch, TEST_PROVIDER), TEST_PROVIDER, signatureRuleText(resolveSignatureOptions(undefined)))

const exportJson = exportedJson
/** What a store holds that was given only the good batches, in order: the model of a node that refused the rest. */
const expectedJson = (...batches: readonly (readonly InputRecord[])[]): Promise<string[]> => modelExport(TEST_PROVIDER, batches)

/** Each way a message on the commit subject can be poison, appended by `poison`; the code a node refuses it with. */
const POISONS: readonly { readonly name: string; readonly code: string; poison(conn: MemoryLogConnection): Promise<number> }[] = [
  {
    name: 'bytes that are not a commit',
    code: 'PRICE_CORRUPT_VALUE',
    poison: async (conn) => (await conn.appendCommit(Buffer.from('garbage, not a commit'), 'garbage-1', TEST_PROVIDER.id)).position,
  },
  {
    name: 'an inline commit whose entry does not decode (its id its own hash)',
    code: 'PRICE_CORRUPT_VALUE',
    poison: async (conn) => {
      const entry = Buffer.from([1, 2, 3, 4, 5, 6, 7, 8])
      return (await conn.appendCommit(Buffer.concat([Buffer.of(1, 0), entry]), batchIdOf(TEST_PROVIDER.id, [entry]), TEST_PROVIDER.id)).position
    },
  },
  {
    name: 'a commit of another provider',
    code: 'PRICE_UNSUPPORTED_PROVIDER',
    poison: async (conn) => {
      const batch = encoded(records(500, 1))
      return (await conn.appendCommit(batch.inline!, batch.id, 'another-provider')).position
    },
  },
  {
    name: 'a commit without a provider',
    code: 'PRICE_UNSUPPORTED_PROVIDER',
    poison: async (conn) => {
      const batch = encoded(records(500, 1))
      return (await conn.appendCommit(batch.inline!, batch.id, undefined as unknown as string)).position
    },
  },
  {
    name: 'a well-formed batch under the id of another batch (bytes changed after validation)',
    code: 'PRICE_CORRUPT_VALUE',
    poison: async (conn) => {
      const genuine = encoded(records(500, 1))
      const forged = encoded([makeRecord({ symbol: 'BTC', timestamp: T0 + 500_000, value: 13.37 })])
      return (await conn.appendCommit(forged.inline!, genuine.id, TEST_PROVIDER.id)).position
    },
  },
  {
    name: 'a parts commit naming another batch\'s parts',
    code: 'PRICE_CORRUPT_VALUE',
    poison: async (conn) => {
      const other = encoded(records(600, 20, 'ETH'))
      const positions: number[] = []
      for (const [index, body] of other.parts.entries()) positions.push((await conn.appendPart(body, `${other.id}.${index}`)).position)
      return (await conn.appendCommit(encodePartsCommit(positions), 'f'.repeat(64), TEST_PROVIDER.id)).position
    },
  },
  {
    name: 'a commit whose signature options do not read',
    code: 'PRICE_CORRUPT_VALUE',
    poison: async (conn) => {
      const batch = encoded(records(500, 1))
      return (await conn.appendCommit(batch.inline!, batch.id, TEST_PROVIDER.id, '{"policy":"sometimes"}')).position
    },
  },
  {
    // The nodes' own options verify nothing: the commit is verified under its writer's, on every node.
    name: 'an unsigned record in a commit written under policy reject',
    code: 'PRICE_INVALID_SIGNATURE',
    poison: async (conn) => {
      const batch = encoded(records(500, 1))
      return (await conn.appendCommit(batch.inline!, batch.id, TEST_PROVIDER.id, '{"policy":"reject","evmSigners":[],"evmChainId":1}')).position
    },
  },
  {
    name: 'a parts commit naming a position after itself',
    code: 'PRICE_CORRUPT_VALUE',
    poison: async (conn) => (await conn.appendCommit(encodePartsCommit([10 ** 9]), 'e'.repeat(64), TEST_PROVIDER.id)).position,
  },
]

describe('a commit a node cannot apply', () => {
  for (const { name, code, poison } of POISONS) {
    it(`is refused and passed over on every node, which go on: ${name}`, async () => {
      const log = new MemoryLog({ maxMessageBytes: MAX_MESSAGE_BYTES })
      const a = await follow(log)
      const b = await follow(log)
      const writer = writerOf(log)
      const before = records(0, 2)
      const after = records(100, 20, 'AR') // as parts: a good batch after the poison is applied whole
      const first = await appendBatch(writer, before)
      const bad = await poison(writer)
      const last = await appendBatch(writer, after)
      for (const { store, node, refused, failures } of [a, b]) {
        expect(await node.waitForPosition(last, APPLIED_WITHIN_MS), JSON.stringify(node.replication())).toBe(true)
        expect(store.position).toBe(last)
        expect(failures).toEqual([])
        expect(refused).toEqual([expect.objectContaining({ position: bad, code })])
        expect(node.replication()).toMatchObject({
          state: 'applying', position: last, lag: 0, appliedBatches: 2, refusedCommits: 1, lastRefused: { position: bad, code },
        })
        expect(await exportJson(store)).toEqual(await expectedJson(before, after))
      }
      expect(first).toBeLessThan(bad)
      // The nodes are identical, and still take writes.
      expect(await exportJson(a.store)).toEqual(await exportJson(b.store))
      const written = await a.node.putBatch(records(200, 1))
      expect(await b.node.waitForPosition(written.position, APPLIED_WITHIN_MS)).toBe(true)
    })
  }

  it('is refused again, with the same verdict, by a node that starts after it and by one that restarts on its store', async () => {
    const log = new MemoryLog({ maxMessageBytes: MAX_MESSAGE_BYTES })
    const writer = writerOf(log)
    const db = new MemoryLevel()
    const first = await follow(log, db as never)
    await appendBatch(writer, records(0, 1))
    const bad = await POISONS[0]!.poison(writer)
    expect(await first.node.waitForPosition(bad, APPLIED_WITHIN_MS)).toBe(true)
    expect(first.refused.map((r) => r.position)).toEqual([bad])
    // Waiting for a refused position ends: it is passed, and never will be applied.
    expect(first.store.position).toBeLessThan(bad)
    const late = await follow(log)
    const last = await appendBatch(writer, records(10, 1))
    expect(await late.node.waitForPosition(last, APPLIED_WITHIN_MS)).toBe(true)
    expect(late.refused).toEqual(first.refused)
    expect(await first.node.waitForPosition(last, APPLIED_WITHIN_MS)).toBe(true)
    expect(await exportJson(late.store)).toEqual(await exportJson(first.store))
  })

  it('carrying no signature options, is verified under the node\'s own: refused when its reject policy refuses a record, and the node goes on', async () => {
    const log = new MemoryLog({ maxMessageBytes: MAX_MESSAGE_BYTES })
    const store = await PriceStore.open(new MemoryLevel(), { provider: TEST_PROVIDER, signatures: { policy: 'reject', threads: 1 } })
    cleanup.push(() => store.close())
    const refused: RefusedCommit[] = []
    const node = await ClusterNode.follow(store, log.connect(), { applyWaitMs: 0, onRefused: (r) => refused.push(r) })
    cleanup.push(() => node.stop())
    // The test records' signatures are made-up bytes, appended with no signature options (as a follower's copy of a
    // primary's events carries none).
    const batch = encoded(records(0, 2))
    const unsigned = (await writerOf(log).appendCommit(batch.inline!, batch.id, TEST_PROVIDER.id)).position
    expect(await node.waitForPosition(unsigned, APPLIED_WITHIN_MS)).toBe(true)
    expect(refused).toEqual([expect.objectContaining({ position: unsigned, code: 'PRICE_INVALID_SIGNATURE' })])
    expect(node.replication()).toMatchObject({ state: 'applying', refusedCommits: 1, lastRefused: { code: 'PRICE_INVALID_SIGNATURE' } })
    expect(await exportJson(store)).toEqual([])
  })

  it('passed over as the stream\'s newest commit leaves no lag behind', async () => {
    const log = new MemoryLog({ maxMessageBytes: MAX_MESSAGE_BYTES })
    const { node, store } = await follow(log)
    const writer = writerOf(log)
    const good = await appendBatch(writer, records(0, 1))
    const bad = await POISONS[2]!.poison(writer)
    expect(await node.waitForPosition(bad, APPLIED_WITHIN_MS)).toBe(true)
    expect(store.position).toBe(good)
    expect(node.replication()).toMatchObject({ state: 'applying', position: good, streamPosition: bad, lag: 0, refusedCommits: 1 })
  })
})
