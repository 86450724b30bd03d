/**
 * RedStone's records as its API served them (a `liteEvmSignature`, no Arweave
 * `signature`) replicated between two cluster nodes on the in-memory log: the
 * follower decodes each commit, validates and verifies it under the writer's
 * `reject` options, and holds the records exactly as written (no
 * `signature`), all `valid`. Waits are for observable states
 * (`waitForPosition`), bounded only to fail.
 */
import { afterEach, describe, expect, it } from 'vitest'
import type { NewPriceRecord } from '../../src/index.js'
import type { SignatureOptions } from '../../src/trust.js'
import { MemoryLog } from '../cluster/support/memory-log.js'
import { LITE_PROVIDER, LITE_RECORDS, LITE_SIGNER, asLatestReturns } from './support/lite-fixture.js'
import { followMemoryLog, type MemoryLogNode } from '../cluster/support/follow-fixtures.js'

const APPLIED_WITHIN_MS = 10_000
const cleanup: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step()
})

function startNode(log: MemoryLog, signatures: SignatureOptions | undefined): Promise<MemoryLogNode> {
  return followMemoryLog(cleanup, log, LITE_PROVIDER, signatures)
}

describe('records signed by liteEvmSignature only, replicated', () => {
  it('reach a follower as written, valid under the writer\'s reject options', async () => {
    const log = new MemoryLog({ maxMessageBytes: 64 * 1024 })
    const writer = await startNode(log, { policy: 'reject', evmSigners: [LITE_SIGNER], threads: 1 })
    const follower = await startNode(log, undefined)
    const { position } = await writer.node.putBatch(LITE_RECORDS as unknown as NewPriceRecord[])
    expect(await follower.node.waitForPosition(position, APPLIED_WITHIN_MS)).toBe(true)
    expect(follower.refused).toEqual([])
    for (const { store } of [writer, follower]) {
      const exported: unknown[] = []
      for await (const record of store.export()) exported.push(record)
      expect(exported).toHaveLength(5)
      for (const record of exported) {
        const written = LITE_RECORDS.find((given) => given['id'] === (record as { id: string }).id)!
        expect(record).toStrictEqual(asLatestReturns(written))
      }
      expect((await store.verify()).stored).toMatchObject({ valid: 5, unchecked: 0 })
    }
  })
})
