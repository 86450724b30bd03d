/**
 * Hostile input: verifyRecord never throws, and calls a signature that is
 * not one of its kind `malformed` (wrong length, not hex/base64, high-s, r
 * or s out of range, bad v, empty, not a string) with a reason.
 */
import fc from 'fast-check'
import { beforeAll, describe, expect, it } from 'vitest'
import type { AllowedSigners } from '../../src/trust/allowed-signers.js'
import { verifyRecord } from '../../src/trust/verify-record.js'
import { arweaveSign, evmWallet, liteEvmSign, newArweaveWallet, type ArweaveWallet } from './support/redstone-signers.js'

const ORDER = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n
const evm = evmWallet('4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318')
let wallet: ArweaveWallet
let signers: AllowedSigners
const record = { id: 'r1', symbol: 'ETH', value: 1812.99651696, permawebTx: 'tx', version: '0.4', source: { binance: 1813.08 }, timestamp: 1685099220000 }

beforeAll(async () => {
  wallet = await newArweaveWallet()
  signers = { providers: [{ id: wallet.address, publicKey: wallet.publicKey, evmAddresses: [evm.address] }] }
}, 120_000)

const hex = (value: bigint): string => value.toString(16).padStart(64, '0')

describe('EVM signatures that are not signatures', () => {
  const lite = liteEvmSign(record, evm)
  const r = BigInt(`0x${lite.slice(2, 66)}`)
  const s = BigInt(`0x${lite.slice(66, 130)}`)
  const v = parseInt(lite.slice(130), 16)
  const cases: [string, unknown][] = [
    ['empty', ''],
    ['no 0x', lite.slice(2)],
    ['only 0x', '0x'],
    ['non-hex', `0x${'zz'.repeat(65)}`],
    ['64 bytes (EIP-2098 form)', lite.slice(0, 130)],
    ['66 bytes', `${lite}00`],
    ['odd length', lite.slice(0, 131)],
    ['high s (the malleated twin)', `0x${hex(r)}${hex(ORDER - s)}${(v === 27 ? 28 : 27).toString(16)}`],
    ['r = 0', `0x${hex(0n)}${hex(s)}${v.toString(16)}`],
    ['s = 0', `0x${hex(r)}${hex(0n)}${v.toString(16)}`],
    ['r ≥ n', `0x${hex(ORDER)}${hex(s)}${v.toString(16)}`],
    ['v = 29', `0x${hex(r)}${hex(s)}1d`],
    ['a number', 12345],
    ['null', null],
    ['an object', { r: '0x1' }],
    ['an array', [lite]],
  ]
  for (const field of ['liteEvmSignature', 'evmSignature'] as const) {
    it.each(cases)(`${field}: %s is malformed`, (_name, signature) => {
      const verdict = verifyRecord({ ...record, provider: wallet.address, [field]: signature }, signers)
      expect(verdict.overall).toBe('malformed')
      expect(verdict.checks[0]?.reason).toMatch(new RegExp(`^\`${field}\` is `))
      expect(verdict.checks[0]?.signer).toBeUndefined()
    })
  }

  it('accepts v as 0/1 and upper-case hex (ethereumjs-util did), and the low-s original', () => {
    const provider = wallet.address
    expect(verifyRecord({ ...record, provider, liteEvmSignature: lite }, signers).overall).toBe('valid')
    expect(verifyRecord({ ...record, provider, liteEvmSignature: `0x${lite.slice(2).toUpperCase()}` }, signers).overall).toBe('valid')
    expect(verifyRecord({ ...record, provider, liteEvmSignature: `${lite.slice(0, 130)}0${v - 27}` }, signers).overall).toBe('valid')
  })
})

describe('Arweave signatures and keys that are not', () => {
  it('calls bad signature text, length or key malformed, and random bytes of the right length invalid', async () => {
    const provider = wallet.address
    const good = await arweaveSign({ ...record, provider }, wallet)
    expect(good).toMatch(/[^=]=$/) // 512 bytes: one padding character, which a case below leaves out
    const cases: [unknown, string | undefined, string][] = [
      ['', undefined, 'malformed'],
      ['%%%%', undefined, 'malformed'],
      [`${good.slice(0, 10)} ${good.slice(10)}`, undefined, 'malformed'],
      [Buffer.alloc(10).toString('base64'), undefined, 'malformed'],
      [Buffer.alloc(513, 1).toString('base64'), undefined, 'malformed'],
      [42, undefined, 'malformed'],
      [good, 'key', 'malformed'],
      [good, 'AAAA', 'malformed'],
      [good, Buffer.alloc(1024, 0xff).toString('base64url'), 'malformed'], // an 8192-bit modulus: too costly to accept
      [Buffer.alloc(512, 7).toString('base64'), undefined, 'invalid'],
      [Buffer.from(good, 'base64').toString('base64url'), undefined, 'valid'],
      // Text that is not the canonical encoding of its bytes is judged by its characters, as it always was.
      [good.replace(/=+$/, ''), undefined, 'valid'],
      [`${good}\n`, undefined, 'malformed'],
      [`_${good.slice(1)}`, undefined, 'malformed'], // both alphabets at once ('_' and the padding '=')
    ]
    for (const [signature, key, expected] of cases) {
      const input = { ...record, provider, signature, ...(key === undefined ? {} : { providerPublicKey: key }) }
      expect(verifyRecord(input, signers).overall, `${String(signature).slice(0, 20)} / ${key?.slice(0, 10)}`).toBe(expected)
    }
  })
})

describe('records that are not records', () => {
  it('never throw, whatever the fields hold', () => {
    const field = fc.oneof(fc.anything(), fc.string(), fc.constantFrom('0x', `0x${'ab'.repeat(65)}`, 'AAAA'))
    fc.assert(
      fc.property(
        fc.record(
          { id: fc.anything(), symbol: fc.anything(), value: fc.oneof(fc.double(), fc.anything()), timestamp: fc.oneof(fc.double(), fc.anything()), version: fc.anything(), provider: fc.anything(), source: fc.anything(), signature: field, liteEvmSignature: field, evmSignature: field, providerPublicKey: field },
          { requiredKeys: [] },
        ),
        (input) => {
          const verdict = verifyRecord(input, signers)
          expect(['valid', 'unsigned', 'invalid', 'malformed', 'signer-not-allowed']).toContain(verdict.overall)
        },
      ),
      { seed: 22, numRuns: 300 },
    )
  })

  it('calls EVM signatures over values no signer could encode invalid', () => {
    for (const value of [-1, Number.NaN, Number.POSITIVE_INFINITY, '1']) {
      const verdict = verifyRecord({ ...record, provider: wallet.address, value, liteEvmSignature: liteEvmSign(record, evm) }, signers)
      expect(verdict.checks[0]).toMatchObject({ result: 'invalid', reason: expect.stringMatching(/^no signature can match/) })
    }
  })
})
