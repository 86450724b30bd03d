/**
 * Nodes whose own `signatures` options differ still build the same store:
 * each commit carries the options its writer verified it under, and every
 * node verifies it under those. The verdicts each node keeps are checked
 * against RedStone-style verification of the records themselves
 * (`verifyRecord` with the writer's signers). On the in-memory log; waits
 * are for observable states (`waitForPosition`), bounded only to fail.
 */
import { MemoryLevel } from 'memory-level'
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import { appendBatch } from '../../src/cluster/append-batch.js'
import { PriceStore, type NewPriceRecord } from '../../src/index.js'
import { type SignatureOptions } from '../../src/trust.js'
import { validateBatch } from '../../src/records/validate-batch.js'
import { verifyRecord } from '../../src/trust/verify-record.js'
import { signAll, signingKeys, type SigningKeys } from '../trust/support/signed-records.js'
import { MemoryLog } from './support/memory-log.js'
import { exportedJson } from './support/store-fixtures.js'
import { followMemoryLog, type MemoryLogNode } from './support/follow-fixtures.js'

const APPLIED_WITHIN_MS = 10_000
/** An EVM address no key of this test signs with. */
const STRANGER = '0x1111111111111111111111111111111111111111'

let keys: SigningKeys
beforeAll(async () => {
  keys = await signingKeys('4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318')
}, 120_000)

const cleanup: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step()
})

function startNode(log: MemoryLog, signatures: SignatureOptions | undefined): Promise<MemoryLogNode> {
  return followMemoryLog(cleanup, log, { name: 'redstone', id: keys.wallet.address, publicKey: keys.wallet.publicKey }, signatures)
}

/** A record signed with every kind RedStone could sign, at minute `minute`. */
async function signed(symbol: string, minute: number): Promise<Record<string, unknown>> {
  return signAll({ id: `${symbol}-${minute}`, symbol, value: 100 + minute, timestamp: 1_685_099_220_000 + minute * 60_000, version: '0.4', permawebTx: 'tx', source: {}, provider: '' }, keys.wallet, keys.evm)
}

/** `record` with the last hex digit of its lite EVM signature's s changed: it recovers another signer, or none. */
function tampered(record: Record<string, unknown>): Record<string, unknown> {
  const value = record.liteEvmSignature as string
  return { ...record, liteEvmSignature: `${value.slice(0, -3)}${value.at(-3) === '0' ? '1' : '0'}${value.slice(-2)}` }
}

const asBatch = (records: readonly Record<string, unknown>[]): NewPriceRecord[] => records as unknown as NewPriceRecord[]

describe('nodes whose own signature options differ', () => {
  it('verify each commit under its writer\'s options: the same records and verdicts on every node', async () => {
    const log = new MemoryLog({ maxMessageBytes: 64 * 1024 })
    const flagging = await startNode(log, { policy: 'flag', evmSigners: [keys.evm.address], threads: 1 })
    const off = await startNode(log, undefined)
    const rejecting = await startNode(log, { policy: 'reject', evmSigners: [STRANGER], threads: 1 })
    const nodes = [flagging, off, rejecting]

    // Written under flag: one good record and one tampered, both kept, with their verdicts.
    const flagged = [await signed('ETH', 0), tampered(await signed('BTC', 0))]
    const first = await flagging.node.putBatch(asBatch(flagged))
    // Written under off: nothing verified, on any node (the rejecting node's own policy would refuse it).
    const second = await off.node.putBatch(asBatch([tampered(await signed('ETH', 1))]))
    // Written under reject with a stranger as the only EVM signer: the rejecting node's own check refuses it before
    // anything is appended, and no node holds it.
    await expect(rejecting.node.putBatch(asBatch([await signed('AR', 2)]))).rejects.toMatchObject({ code: 'PRICE_INVALID_SIGNATURE' })

    for (const { node } of nodes) expect(await node.waitForPosition(second.position, APPLIED_WITHIN_MS)).toBe(true)
    const expected = flagged.map((record) => verifyRecord(record, keys.signers).overall)
    expect(expected[0]).toBe('valid')
    expect(expected[1]).not.toBe('valid')
    const exports = await Promise.all(nodes.map(async ({ store }) => exportedJson(store)))
    for (const { store, refused } of nodes) {
      expect(refused).toEqual([])
      expect(store.position).toBe(second.position)
      const report = await store.verify()
      expect(report.records).toBe(3)
      expect(report.stored).toMatchObject({ valid: 1, [expected[1]!]: 1, unchecked: 1 })
      expect(report.failing.map((failing) => failing.id)).toEqual(['BTC-0'])
    }
    expect(exports[1]).toEqual(exports[0])
    expect(exports[2]).toEqual(exports[0])
    expect(first.position).toBeLessThan(second.position)
  })

  it('a commit written under reject is verified under reject on a node that verifies nothing of its own: a forged one is refused there too', async () => {
    const log = new MemoryLog({ maxMessageBytes: 64 * 1024 })
    const rejecting = await startNode(log, { policy: 'reject', evmSigners: [keys.evm.address], threads: 1 })
    const off = await startNode(log, undefined)
    const good = await rejecting.node.putBatch(asBatch([await signed('ETH', 0)]))
    // A raw writer on the commit subject copies the writer's options onto a batch with a tampered record.
    const forger = log.connect()
    cleanup.push(() => forger.close())
    const forged = await appendBatch(forger, validateBatch(asBatch([tampered(await signed('BTC', 1))]), rejecting.store.provider), rejecting.store.provider, rejecting.store.signatureRule)
    const after = await rejecting.node.putBatch(asBatch([await signed('AR', 2)]))
    for (const { node, store, refused } of [rejecting, off]) {
      expect(await node.waitForPosition(after.position, APPLIED_WITHIN_MS)).toBe(true)
      expect(refused).toEqual([expect.objectContaining({ position: forged, code: 'PRICE_INVALID_SIGNATURE' })])
      expect((await store.verify()).stored).toMatchObject({ valid: 2, unchecked: 0 })
    }
    expect(await exportedJson(off.store)).toEqual(await exportedJson(rejecting.store))
    expect(good.position).toBeLessThan(forged)
  })
})

describe('PriceStore.putBatch with signatures', () => {
  it('verifies the batch under the options given, not the store\'s own, rule after rule; bad options refuse the batch and write nothing', async () => {
    const provider = { name: 'redstone', id: keys.wallet.address, publicKey: keys.wallet.publicKey }
    const store = await PriceStore.open(new MemoryLevel(), { provider, signatures: { policy: 'reject', evmSigners: [STRANGER], threads: 1 } })
    cleanup.push(() => store.close())
    const bad = tampered(await signed('BTC', 0))
    /** The verdict RedStone-style verification gives `record` under `rule`'s signers (`unchecked` under off). */
    const verdictUnder = (record: Record<string, unknown>, rule: SignatureOptions): string => rule.policy === 'off'
      ? 'unchecked'
      : verifyRecord(record, { providers: [{ id: provider.id, publicKey: provider.publicKey, evmAddresses: rule.evmSigners ?? [] }] }).overall
    // More rules than the store keeps verifiers for at once, and back to the first: each batch under its own.
    const rules: SignatureOptions[] = [
      { policy: 'flag', evmSigners: [keys.evm.address] },
      { policy: 'off' },
      { policy: 'flag', evmSigners: [STRANGER] },
      { policy: 'flag', evmSigners: [keys.evm.address.toUpperCase().replace('0X', '0x')], evmChainId: 1 },
    ]
    const expected: Record<string, number> = {}
    const failing: string[] = []
    const take = async (record: Record<string, unknown>, signatures: SignatureOptions): Promise<void> => {
      await store.putBatch(asBatch([record]), { signatures })
      const verdict = verdictUnder(record, signatures)
      expected[verdict] = (expected[verdict] ?? 0) + 1
      if (verdict !== 'valid' && verdict !== 'unchecked') failing.push(record.id as string)
    }
    for (const [minute, signatures] of rules.entries()) await take(await signed('ETH', minute + 1), signatures)
    await expect(store.putBatch(asBatch([bad]), { signatures: { policy: 'reject', evmSigners: [keys.evm.address] } }))
      .rejects.toMatchObject({ code: 'PRICE_INVALID_SIGNATURE', details: { field: 'liteEvmSignature' } })
    await expect(store.putBatch(asBatch([bad]), { signatures: { policy: 'sometimes' as 'off' } }))
      .rejects.toMatchObject({ code: 'PRICE_INVALID_OPTIONS', details: { field: 'signatures.policy' } })
    expect(store.position).toBe(rules.length)
    await take(bad, rules[0]!)
    // The store's own rule (reject, the stranger) would have refused all of these.
    expect(expected).toMatchObject({ valid: 2, unchecked: 1 })
    expect(failing).toEqual(['ETH-3', 'BTC-0'])
    const report = await store.verify()
    expect(report.stored).toMatchObject(expected)
    expect(report.records).toBe(rules.length + 1)
    expect(report.failing.map((record) => record.id).sort()).toEqual([...failing].sort())
  })
})
