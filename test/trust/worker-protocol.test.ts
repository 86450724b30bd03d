/**
 * The compact forms SignatureVerifier and its workers exchange
 * (worker-protocol.ts): a record cut to the fields verification reads and
 * sent as JSON text must verify exactly as the record itself (unicode in
 * `source`, extra fields, -0, every signature kind, a carried provider key,
 * odd records); verdicts sent as distinct shapes plus indices come back
 * equal and in order.
 */
import { beforeAll, describe, expect, it } from 'vitest'
import type { AllowedSigners } from '../../src/trust/allowed-signers.js'
import type { RecordVerdict } from '../../src/trust/verdict.js'
import { verifyRecord } from '../../src/trust/verify-record.js'
import { RequestBuilder, decodeRecords, decodeVerdicts, encodeVerdicts, verificationInput } from '../../src/trust/worker-protocol.js'
import { arweaveSign, evmWallet, liteEvmSign, newArweaveWallet, typedEvmSign, type ArweaveWallet } from './support/redstone-signers.js'

const evm = evmWallet('4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318')
let wallet: ArweaveWallet
let signers: AllowedSigners
let records: Record<string, unknown>[]

/** Records through the request form: added to one request, cloned as postMessage clones it, decoded as a worker decodes it. */
function roundTrip(list: readonly Record<string, unknown>[], omitKey = false): Record<string, unknown>[] {
  const request = new RequestBuilder()
  expect(list.every((record) => request.add(record, omitKey))).toBe(true)
  expect(request.size).toBe(list.length)
  return decodeRecords(structuredClone(request.finish()))
}

/** One record the builder takes alone, as its request carries it. */
function requestOf(record: Record<string, unknown>): ReturnType<RequestBuilder['finish']> {
  const request = new RequestBuilder()
  expect(request.add(record)).toBe(true)
  return request.finish()
}

beforeAll(async () => {
  wallet = await newArweaveWallet()
  signers = { providers: [{ id: wallet.address, publicKey: wallet.publicKey, evmAddresses: [evm.address] }] }
  const bases: Record<string, unknown>[] = [
    { id: 'plain', symbol: 'ETH', value: 1800.25, version: '0.4', source: { binance: 1800.2, kraken: 1800.3 } },
    { id: 'unicode', symbol: 'ETH', value: 1800.5, version: '3', source: { 'bïnance': 1, 'ä': 2, z: 3, '交易所': { 'ü': [1, 'ß'] }, '😀': 4 } },
    { id: 'unsorted', symbol: 'BTC', value: 27000, version: '1', source: { z: 1, a: 2 } },
    { id: 'minus-zero', symbol: 'ZERO', value: -0, version: '0.4', source: { x: -0 } },
  ]
  records = []
  for (const [i, base] of bases.entries()) {
    const record = { ...base, provider: wallet.address, permawebTx: 'tx', timestamp: 1_685_099_220_000 + i * 10_000 }
    const signed: Record<string, unknown> = {
      ...record,
      signature: await arweaveSign(record, wallet),
      liteEvmSignature: liteEvmSign(record as never, evm),
      evmSignature: typedEvmSign(record as never, evm),
      // Fields verification does not read: they stay behind, and must not change a verdict.
      extraNumber: 7, extraObject: { note: 'ünïcode', nested: [1, 2] }, minted: null,
    }
    records.push(signed)
  }
  records.push(
    { ...records[1], providerPublicKey: wallet.publicKey },
    { ...records[1], providerPublicKey: 'AAAA' },
    { ...records[0], value: 1 },
    { ...records[2], source: { a: 2, z: 1 } },
    { id: 'unsigned', symbol: 'X' },
    { liteEvmSignature: '0x12', evmSignature: 42 },
    { signature: 'AAAA', provider: wallet.address, value: undefined, source: undefined },
    { signature: 42, provider: wallet.address },
    { ...records[0], signature: `${records[0]?.['signature'] as string}\ud800` },
  )
}, 120_000)

describe('worker protocol: records out', () => {
  it('gives the worker records that verify exactly as the records themselves', () => {
    const expected = records.map((record) => verifyRecord(record, signers))
    expect(expected.slice(0, 4).map((verdict) => verdict.overall)).toEqual(['valid', 'valid', 'valid', 'valid'])
    expect(roundTrip(records).map((record) => verifyRecord(record, signers))).toEqual(expected)
  })

  it('leaves out the provider key when asked (the worker checks against the configured one), and nothing else verification reads', () => {
    const carried = records[4] as Record<string, unknown>
    const [sent] = roundTrip([carried], true)
    expect(sent).not.toHaveProperty('providerPublicKey')
    expect(verifyRecord(sent as Record<string, unknown>, signers)).toEqual(verifyRecord(carried, signers))
    expect(Object.keys(verificationInput(carried)).sort()).toEqual(
      ['evmSignature', 'id', 'liteEvmSignature', 'permawebTx', 'provider', 'providerPublicKey', 'signature', 'source', 'symbol', 'timestamp', 'value', 'version'],
    )
  })

  it('keeps unicode and key order inside source, and sends -0 as JSON does', () => {
    const [, unicode, , minusZero] = roundTrip(records)
    expect(Object.keys(unicode?.['source'] as object)).toEqual(Object.keys(records[1]?.['source'] as object))
    expect(unicode?.['source']).toEqual(records[1]?.['source'])
    expect(minusZero?.['value']).toBe(0)
  })

  it('sends only own enumerable fields, as JSON of the whole record would, and a record with toJSON whole', () => {
    const inherited = Object.create({ signature: 'AAAA' }) as Record<string, unknown>
    inherited['id'] = 'x'
    expect(verificationInput(inherited)).toEqual({ id: 'x' })
    const custom = { toJSON: () => ({ liteEvmSignature: '0x00' }) }
    const [sent] = decodeRecords(requestOf(custom))
    expect(sent).toEqual({ liteEvmSignature: '0x00' })
    const refused = new RequestBuilder()
    expect(refused.add({ value: 10n })).toBe(false)
    expect(refused.size).toBe(0)
    const array = Object.assign([1], { signature: 'AAAA' }) as unknown as Record<string, unknown>
    expect(decodeRecords(requestOf(array))).toEqual([{}])
  })

  it('sends a string signature beside the JSON, and any other signature in it', () => {
    const signed = records[0] as Record<string, unknown>
    const request = requestOf(signed)
    expect(request.signatures).toEqual([signed['signature']])
    expect(JSON.parse(request.text)[0]).not.toHaveProperty('signature')
    const odd = requestOf({ signature: 42, id: 'x' })
    expect(odd.signatures).toEqual([null])
    expect(JSON.parse(odd.text)).toEqual([{ signature: 42, id: 'x' }])
  })

  it('decodes anything that is not an object as an empty record', () => {
    expect(decodeRecords({ text: '[1,null,"x",[1],{"a":1}]', signatures: [null, null, null, null, 'AAAA'] })).toEqual([{}, {}, {}, {}, { a: 1, signature: 'AAAA' }])
  })
})

describe('worker protocol: verdicts back', () => {
  it('round-trips verdicts in order as distinct shapes plus indices, equal verdicts sharing one object', () => {
    const verdicts = [...records, ...records].map((record) => verifyRecord(record, signers))
    const { shapes, indices } = encodeVerdicts(verdicts)
    expect(indices).toBeInstanceOf(Uint32Array)
    expect(JSON.parse(shapes).length).toBe(new Set(verdicts.map((verdict) => JSON.stringify(verdict))).size)
    const decoded = decodeVerdicts(shapes, indices)
    expect(decoded).toEqual(verdicts)
    expect(decoded[0]).toBe(decoded[records.length])
    expect(decodeVerdicts(encodeVerdicts([]).shapes, encodeVerdicts([]).indices)).toEqual([])
  })

  it('tells apart verdicts that differ in any signer, result or reason only', () => {
    const covers = ['symbol']
    const valid = (signer?: string): RecordVerdict => ({ overall: 'valid', checks: [{ kind: 'lite-evm', result: 'valid', ...(signer === undefined ? {} : { signer }), covers }] })
    const verdicts: RecordVerdict[] = [
      valid('0xab'), valid('0xab'), valid('0xac'), valid(), valid(''), valid('a\u0000b'), valid('a\u0000b'),
      { overall: 'invalid', checks: [{ kind: 'lite-evm', result: 'invalid', signer: '0xab', covers, reason: 'one' }] },
      { overall: 'invalid', checks: [{ kind: 'lite-evm', result: 'invalid', signer: '0xab', covers, reason: 'two' }] },
      { overall: 'valid', checks: [{ kind: 'lite-evm', result: 'valid', signer: '0xab', covers }, { kind: 'evm-typed', result: 'valid', signer: '0xab', covers }] },
    ]
    const { shapes, indices } = encodeVerdicts(verdicts)
    expect(JSON.parse(shapes)).toHaveLength(new Set(verdicts.map((verdict) => JSON.stringify(verdict))).size)
    expect(decodeVerdicts(shapes, indices)).toEqual(verdicts)
  })
})
