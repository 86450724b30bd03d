/**
 * A batch's bytes in the replication log (src/cluster/batch-codec.ts): the
 * records come back exactly as validated (the store's own record bytes, so
 * `-0` and odd keys too) and in the batch's order; a batch over one message
 * is cut into parts, each within the limit, whose records together are the
 * batch; the id depends on the provider and the bytes only.
 */
import { describe, expect, it } from 'vitest'
import { decodeCommit, decodeEntry, encodeBatch, encodePartsCommit } from '../../src/cluster/batch-codec.js'
import { validateBatch } from '../../src/records/validate-batch.js'
import { toExactJson } from '../../src/rules/exact-json.js'
import { TEST_PROVIDER as PROVIDER, T0, makeRecord } from '../../src/testing/records.js'
import { throwsCode } from '../support/assertions.js'

const records = (count: number, overrides: Record<string, unknown> = {}) =>
  Array.from({ length: count }, (_, i) => makeRecord({ symbol: i % 3 === 0 ? 'ETH' : 'BTC', timestamp: T0 + i * 1000, ...overrides }))

/** What a node gets back from an encoded batch: inline, or from its parts in order. */
function decodeAll(batch: ReturnType<typeof encodeBatch>) {
  if (batch.inline !== undefined) {
    const commit = decodeCommit(batch.inline)
    if (commit.kind !== 'inline') throw new Error('expected an inline commit')
    return decodeEntry(commit.entry, PROVIDER, 'test')
  }
  return batch.parts.flatMap((part) => decodeEntry(part, PROVIDER, 'test'))
}

/** The records as the store returns them: the input with the provider's public key joined. */
const returned = (inputs: readonly Record<string, unknown>[]) => inputs.map((input) => JSON.parse(toExactJson({ ...input, providerPublicKey: PROVIDER.publicKey })))

describe('batch bytes in the replication log', () => {
  it('carries a small batch inline, records exactly and in order, duplicates included', () => {
    const inputs = [...records(5), makeRecord({ timestamp: T0, value: -0 }), makeRecord({ timestamp: T0, extra: { nested: -0 } })]
    const batch = encodeBatch(validateBatch(inputs, PROVIDER), PROVIDER, 1024 * 1024)
    expect(batch.parts).toEqual([])
    const decoded = decodeAll(batch)
    expect(decoded.map((record) => toExactJson(record))).toEqual(returned(inputs).map((record) => toExactJson(record)))
    expect(Object.is(decoded[5]?.value, -0)).toBe(true)
  })

  it('cuts a large batch into parts within the limit, which together are the batch', () => {
    const inputs = records(400)
    const limit = 16 * 1024
    const batch = encodeBatch(validateBatch(inputs, PROVIDER), PROVIDER, limit)
    expect(batch.inline).toBeUndefined()
    expect(batch.parts.length).toBeGreaterThan(5)
    for (const part of batch.parts) expect(part.length).toBeLessThanOrEqual(limit)
    expect(decodeAll(batch).map((record) => toExactJson(record))).toEqual(returned(inputs).map((record) => toExactJson(record)))
    const commit = decodeCommit(encodePartsCommit([3, 5, 2 ** 40]))
    expect(commit).toEqual({ kind: 'parts', parts: [3, 5, 2 ** 40] })
  })

  it('names a batch by its provider and bytes: the same batch gets the same id, any change another', () => {
    const stored = validateBatch(records(10), PROVIDER)
    const id = encodeBatch(stored, PROVIDER, 1 << 20).id
    expect(encodeBatch(validateBatch(records(10), PROVIDER), PROVIDER, 1 << 20).id).toBe(id)
    expect(encodeBatch(stored.slice(0, 9), PROVIDER, 1 << 20).id).not.toBe(id)
    expect(encodeBatch([...stored].reverse(), PROVIDER, 1 << 20).id).not.toBe(id)
    expect(encodeBatch(stored, { ...PROVIDER, id: 'another' }, 1 << 20).id).not.toBe(id)
    // Cut into parts or not, the id is the batch's.
    expect(encodeBatch(stored, PROVIDER, 4096).id).toBe(id)
  })

  it('refuses a record that does not fit one message even alone, naming it', () => {
    const inputs = [...records(3), makeRecord({ timestamp: T0 + 99, source: { big: 'x'.repeat(20_000) } })]
    const err = throwsCode(() => encodeBatch(validateBatch(inputs, PROVIDER), PROVIDER, 8 * 1024), 'PRICE_INVALID_RECORD')
    expect(err.details.index).toBe(3)
  })

  it('refuses commit bytes of another version or kind', () => {
    expect(() => decodeCommit(Uint8Array.of(9, 0))).toThrow(/commit version 9/)
    expect(() => decodeCommit(Uint8Array.of(1, 7))).toThrow(/commit kind 7/)
  })
})
