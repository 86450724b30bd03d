/**
 * SignatureVerifier: the worker pool gives exactly verifyRecord's verdicts,
 * in order, verifies a repeated signature once (its cache), survives
 * hostile batches, and closes: pending batches reject, later ones too, and
 * every worker has exited when close() resolves. Runs the worker from
 * sources (bundled on first use, worker-script.ts).
 */
import { Worker } from 'node:worker_threads'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import type { AllowedSigners } from '../../src/trust/allowed-signers.js'
import { SignatureVerifier } from '../../src/trust/signature-verifier.js'
import { verifyRecord } from '../../src/trust/verify-record.js'
import { arweaveSign, evmWallet, liteEvmSign, newArweaveWallet, type ArweaveWallet } from './support/redstone-signers.js'

const evm = evmWallet('4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318')
let wallet: ArweaveWallet
let signers: AllowedSigners
let batch: Record<string, unknown>[]
const verifiers: SignatureVerifier[] = []

function open(options: Partial<ConstructorParameters<typeof SignatureVerifier>[0]> = {}): SignatureVerifier {
  const verifier = new SignatureVerifier({ signers, threads: 2, ...options })
  verifiers.push(verifier)
  return verifier
}

beforeAll(async () => {
  wallet = await newArweaveWallet()
  signers = { providers: [{ id: wallet.address, publicKey: wallet.publicKey, evmAddresses: [evm.address] }] }
  batch = []
  for (let i = 0; i < 40; i++) {
    const record = { id: `r${i}`, symbol: i % 2 === 0 ? 'ETH' : 'BTC', provider: wallet.address, value: 1000 + i / 7, permawebTx: 'tx', version: '0.4', source: { binance: i }, timestamp: 1_685_099_220_000 + i * 10_000 }
    const signed: Record<string, unknown> = { ...record, liteEvmSignature: liteEvmSign(record, evm) }
    if (i % 4 === 0) signed['signature'] = await arweaveSign(record, wallet)
    batch.push(i % 5 === 3 ? { ...signed, value: 1 } : signed)
  }
  batch.push({ id: 'unsigned', symbol: 'X' }, { liteEvmSignature: '0x12' }, { signature: 'AAAA', provider: wallet.address })
  // As a query returns it: with the provider's own key (the pool leaves it out of what it sends), and with another.
  batch.push({ ...batch[0], providerPublicKey: wallet.publicKey }, { ...batch[0], providerPublicKey: 'AAAA' })
}, 120_000)

afterAll(async () => {
  await Promise.all(verifiers.map((verifier) => verifier.close()))
})

describe('SignatureVerifier', () => {
  it("gives verifyRecord's verdict for each record, in order", async () => {
    const verifier = open()
    const verdicts = await verifier.verifyMany(batch)
    expect(verdicts).toEqual(batch.map((record) => verifyRecord(record, signers)))
    expect(verdicts.filter((v) => v.overall === 'valid').length).toBe(33)
    expect(verdicts.filter((v) => v.overall === 'invalid').length).toBe(8)
    expect(await verifier.verifyMany([])).toEqual([])
  })

  it('verifies a signature seen before from its cache', async () => {
    const verifier = open()
    await verifier.verifyMany(batch)
    const first = verifier.stats()
    const again = await verifier.verifyMany(batch)
    const second = verifier.stats()
    expect(again).toEqual(batch.map((record) => verifyRecord(record, signers)))
    // Every signature that reached the cryptography the first time (or its cache: the copies of record 0) is a hit now.
    expect(first.cacheHits).toBeGreaterThan(0)
    expect(second.cacheHits - first.cacheHits).toBe(first.cacheMisses + first.cacheHits)
    expect(second.cacheMisses).toBe(first.cacheMisses)
    expect(second.records).toBe(2 * batch.length)
  })

  it('spreads a large batch over every worker, and a signature any worker verified is a hit on all of them', async () => {
    // 405 records: chunks of 64, 64, 64 and 213 for three workers, each taken by whichever worker reaches it first.
    const large = Array.from({ length: 9 }, () => batch).flat()
    const verifier = open({ threads: 3 })
    const expected = large.map((record) => verifyRecord(record, signers))
    expect(await verifier.verifyMany(large)).toEqual(expected)
    const first = verifier.stats()
    expect(await verifier.verifyMany(large)).toEqual(expected)
    const second = verifier.stats()
    expect(second.cacheMisses).toBe(first.cacheMisses)
    expect(second.cacheHits - first.cacheHits).toBe(first.cacheMisses + first.cacheHits)
  })

  it('verifies records JSON cannot carry in the calling thread, without throwing', async () => {
    const verifier = open({ threads: 1 })
    const cyclic: Record<string, unknown> = { liteEvmSignature: '0x00' }
    cyclic['self'] = cyclic
    const verdicts = await verifier.verifyMany([{ value: 10n, signature: 'AA' }, cyclic, batch[0] as Record<string, unknown>])
    expect(verdicts.map((v) => v.overall)).toEqual(['signer-not-allowed', 'malformed', 'valid'])
  })

  it('rejects pending and later batches once closed, and closes twice', async () => {
    const verifier = open()
    const pending = verifier.verifyMany(batch)
    await verifier.close()
    await expect(pending).rejects.toThrow(/closed/)
    await expect(verifier.verifyMany(batch)).rejects.toThrow(/closed/)
    await verifier.close()
  })

  it('runs several batches at once on the same workers', async () => {
    const verifier = open()
    const answers = await Promise.all([verifier.verifyMany(batch), verifier.verifyMany(batch.slice(5)), verifier.verifyMany(batch.slice(0, 3))])
    expect(answers[1]).toEqual(batch.slice(5).map((record) => verifyRecord(record, signers)))
    expect(answers[2]?.length).toBe(3)
  })

  it('never hangs when a worker dies in a batch: the others answer it or it rejects, and the next batch is answered', async () => {
    const verifier = open()
    await verifier.verifyMany(batch.slice(0, 2)) // both workers started
    const original = Worker.prototype.postMessage
    let ended = false
    const post = vi.spyOn(Worker.prototype, 'postMessage').mockImplementation(function (this: Worker, message: unknown, transfer?: Parameters<Worker['postMessage']>[1]) {
      // The first worker sent the batch's first chunk is ended instead: it claims nothing, and exits.
      if (!ended && typeof message === 'object' && message !== null && 'claims' in message) {
        ended = true
        void this.terminate()
        return
      }
      original.call(this, message, transfer)
    })
    const expected = batch.map((record) => verifyRecord(record, signers))
    try {
      const outcome = await verifier.verifyMany(batch).then((verdicts) => verdicts, (error: unknown) => error)
      if (outcome instanceof Error) expect(outcome.message).toMatch(/worker exited/)
      else expect(outcome).toEqual(expected)
    } finally {
      post.mockRestore()
    }
    expect(ended).toBe(true)
    expect(await verifier.verifyMany(batch)).toEqual(expected)
  })

  it('refuses a thread count that is not a positive integer', () => {
    expect(() => new SignatureVerifier({ signers, threads: 0 })).toThrow(RangeError)
  })
})
