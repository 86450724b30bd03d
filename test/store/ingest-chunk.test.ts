/**
 * What a store's signature workers read from a chunk of the batch being
 * written: each record as it was signed (the fields verification reads,
 * extra ones included, the provider's id, no key), exactly as the record
 * was given, -0 and unicode included: computed here from the given records
 * alone. And the store's workers, sent a batch so, give verifyRecord's
 * verdict of each record as given.
 */
import fc from 'fast-check'
import { afterAll, describe, expect, it } from 'vitest'
import { FramedRecords } from '../../src/keys/framed-records.js'
import { validateBatch } from '../../src/records/validate-batch.js'
import { INGEST_WORKER, readIngestChunk } from '../../src/store/signatures/ingest-chunk.js'
import { SignatureVerifier } from '../../src/trust/signature-verifier.js'
import { verifyRecord } from '../../src/trust/verify-record.js'
import { TEST_PROVIDER } from '../../src/testing/records.js'
import { VERIFIED_FIELDS } from '../../src/trust/worker-protocol.js'
import { signAll, signingKeys, unsignedRecordArb } from '../trust/support/signed-records.js'

const context = { provider: { id: TEST_PROVIDER.id, publicKey: TEST_PROVIDER.publicKey } }

/** The record as signed, from the record given: its verified fields but the key, `provider` the store's. */
function asSigned(given: Record<string, unknown>): Record<string, unknown> {
  const signed: Record<string, unknown> = {}
  for (const field of VERIFIED_FIELDS) {
    if (field === 'providerPublicKey') continue
    if (field === 'provider') signed[field] = TEST_PROVIDER.id
    else if (Object.hasOwn(given, field)) signed[field] = given[field]
  }
  return signed
}

const givenArb = fc.array(
  fc.tuple(unsignedRecordArb, fc.option(fc.constantFrom('0x' + 'ab'.repeat(65), 'not-hex'), { nil: undefined }), fc.option(fc.constant('0x' + 'cd'.repeat(65)), { nil: undefined }), fc.boolean()).map(([record, lite, typed, negativeZero]) => ({
    ...record,
    provider: TEST_PROVIDER.id,
    signature: Buffer.from(String(record['id'])).toString('base64'),
    ...(lite === undefined ? {} : { liteEvmSignature: lite }),
    ...(typed === undefined ? {} : { evmSignature: typed }),
    ...(negativeZero ? { value: -0 } : {}),
  })),
  { minLength: 1, maxLength: 20 },
)

describe('readIngestChunk', () => {
  it('reads each record of a chunk as it was signed, as given (property)', () => {
    fc.assert(
      fc.property(givenArb, fc.nat(), (given, cut) => {
        const framed = new FramedRecords(validateBatch(given, TEST_PROVIDER))
        const first = (cut % given.length) + 1
        const chunks = [framed.share(first), ...(first < given.length ? [framed.share(given.length)] : [])]
        const read = chunks.flatMap((chunk) => readIngestChunk(chunk, context))
        expect(read).toEqual(given.map(asSigned))
        // toEqual tells -0 from 0; say so where it matters.
        read.forEach((record, i) => expect(Object.is(record['value'], given[i]?.value)).toBe(true))
      }),
      { numRuns: 200 },
    )
  })
})

describe('the ingest workers', () => {
  const verifiers: SignatureVerifier[] = []
  afterAll(async () => {
    await Promise.all(verifiers.map((verifier) => verifier.close()))
  })

  it("give verifyRecord's verdict of each record as given, for a batch sent encoded chunk by chunk", async () => {
    const { wallet, evm, signers } = await signingKeys('4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318')
    const provider = { name: 'test', id: wallet.address, publicKey: wallet.publicKey }
    const unsigned = fc.sample(unsignedRecordArb, { numRuns: 150, seed: 22 })
    const given: Record<string, unknown>[] = []
    for (const [i, record] of unsigned.entries()) {
      const signed = await signAll({ ...record, id: `r${i}` }, wallet, evm)
      // Signed, then: the id changed (the Arweave signature fails, the lite EVM one does not cover it), a signature of 3 bytes.
      given.push(i % 7 === 3 ? { ...signed, id: `changed-${i}` } : i % 11 === 5 ? { ...record, id: `r${i}`, provider: wallet.address, signature: 'AAAA' } : signed)
    }
    // The worker reads a record's own `provider` from the store's: given as signed by this one.
    const verifier = new SignatureVerifier({ signers, threads: 2 }, { entry: INGEST_WORKER, context: { provider: { id: provider.id, publicKey: provider.publicKey } } })
    verifiers.push(verifier)
    const framed = new FramedRecords(validateBatch(given, provider))
    const cuts: number[] = []
    const verdicts = await verifier.verifyEncoded(given.length, (from, to) => {
      cuts.push(from, to)
      return framed.share(to)
    })
    // Small chunks first, one per worker: more than one chunk each way.
    expect(cuts.slice(0, 4)).toEqual([0, 64, 64, 128])
    expect(verdicts).toEqual(given.map((record) => verifyRecord(record, signers)))
    const overall = new Set(verdicts.map((verdict) => verdict.overall))
    expect(overall.has('valid') && overall.size > 1).toBe(true)
  }, 120_000)

  it("SignatureVerifier's own worker refuses an encoded chunk", async () => {
    const verifier = new SignatureVerifier({ signers: { providers: [] }, threads: 1 })
    verifiers.push(verifier)
    await expect(verifier.verifyEncoded(1, () => new Uint8Array(new SharedArrayBuffer(1)))).rejects.toThrow(/does not read encoded chunks/)
  })
})
