/**
 * What cannot be a signed data package is refused with a code and the field
 * at fault (`PRICE_INVALID_RECORD` for packages, `PRICE_INVALID_OPTIONS` for
 * a signer manifest); a signature RedStone's own recovery refuses is
 * `malformed`.
 */
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { isPriceStoreError } from '../../../src/errors.js'
import { parseDataPackage, parseSerializedDataPackage, parseSignerManifest, recoverPackageSigner, serializeSignedDataPackage, verifyDataPackage } from '../../../src/trust.js'
import { protocol } from './redstone-protocol.js'

const fixture = JSON.parse(readFileSync(new URL('../fixtures/redstone-primary-prod-packages.json', import.meta.url), 'utf8')) as { response: { AAVE: Record<string, unknown>[] }; signers: string[] }
const real = fixture.response.AAVE[0] as Record<string, unknown>
const manifest = parseSignerManifest({ dataServices: { 'redstone-primary-prod': { signers: fixture.signers } } })
const signature65 = Buffer.concat([Buffer.alloc(64, 7), Buffer.from([27])]).toString('base64')
const base = { timestampMilliseconds: 1_700_000_000_000, signature: signature65, dataPoints: [{ dataFeedId: 'ETH', value: 1 }] }

function refusal(run: () => unknown): { code: string; field: string | undefined } {
  try {
    run()
  } catch (error) {
    if (!isPriceStoreError(error)) throw error
    return { code: error.code, field: error.details.field }
  }
  throw new Error('not refused')
}
const packageRefusal = (json: unknown): { code: string; field: string | undefined } => refusal(() => parseDataPackage(json))

describe('parseDataPackage refuses', () => {
  it.each([
    ['a feed id over 31 bytes of UTF-8 (in 31 characters or fewer)', { ...base, dataPoints: [{ dataFeedId: 'é'.repeat(16), value: 1 }] }, 'dataPoints[0].dataFeedId'],
    ['an empty feed id', { ...base, dataPoints: [{ dataFeedId: '', value: 1 }] }, 'dataPoints[0].dataFeedId'],
    ['a value that does not fit its byte size', { ...base, dataPoints: [{ dataFeedId: 'ETH', value: 256, decimals: 0, valueByteSize: 1 }] }, 'dataPoints[0].value'],
    ['a value over 32 bytes once scaled', { ...base, dataPoints: [{ dataFeedId: 'ETH', value: 1e70 }] }, 'dataPoints[0].value'],
    ['a negative value', { ...base, dataPoints: [{ dataFeedId: 'ETH', value: -1 }] }, 'dataPoints[0].value'],
    ['a value that is neither a number nor base64', { ...base, dataPoints: [{ dataFeedId: 'ETH', value: 'not base64!' }] }, 'dataPoints[0].value'],
    ['values of different byte sizes', { ...base, dataPoints: [{ dataFeedId: 'ETH', value: 1 }, { dataFeedId: 'BTC', value: 1, valueByteSize: 16 }] }, 'dataPoints[1].value'],
    ['a valueByteSize over 32', { ...base, dataPoints: [{ dataFeedId: 'ETH', value: 1, valueByteSize: 33 }] }, 'dataPoints[0].valueByteSize'],
    ['decimals out of range', { ...base, dataPoints: [{ dataFeedId: 'ETH', value: 1, decimals: 101 }] }, 'dataPoints[0].decimals'],
    ['duplicate feed ids', { ...base, dataPoints: [{ dataFeedId: 'ETH', value: 1 }, { dataFeedId: 'ETH', value: 2 }] }, 'dataPoints'],
    ['no data point', { ...base, dataPoints: [] }, 'dataPoints'],
    ['a missing signature', { ...base, signature: undefined }, 'signature'],
    ['a signature that is not base64', { ...base, signature: '0x' + 'ab'.repeat(65) }, 'signature'],
    ['a signature of 64 bytes', { ...base, signature: Buffer.alloc(64, 1).toString('base64') }, 'signature'],
    ['a signature whose v is 2', { ...base, signature: Buffer.concat([Buffer.alloc(64, 7), Buffer.from([2])]).toString('base64') }, 'signature'],
    ['a fractional timestamp', { ...base, timestampMilliseconds: 1.5 }, 'timestampMilliseconds'],
    ['a negative timestamp', { ...base, timestampMilliseconds: -1 }, 'timestampMilliseconds'],
    ['a timestamp past 2^53', { ...base, timestampMilliseconds: 2 ** 53 }, 'timestampMilliseconds'],
    ['a timestamp as a string', { ...base, timestampMilliseconds: '1700000000000' }, 'timestampMilliseconds'],
    ['a timestamp past the 6 bytes it is signed in', { ...base, timestampMilliseconds: 2 ** 48 }, 'timestampMilliseconds'],
    ['a signerAddress that is no address', { ...base, signerAddress: '0x12' }, 'signerAddress'],
    ['a package that is not an object', [base], 'package'],
    ['text that is not JSON', '{"dataPoints":', 'package'],
  ])('%s', (_, json, field) => {
    expect(packageRefusal(json)).toEqual({ code: 'PRICE_INVALID_RECORD', field })
  })

  it('as RedStone refuses them', () => {
    // The oracle: RedStone's code throws on each of these when asked to deserialize it.
    for (const json of [{ ...base, dataPoints: [{ dataFeedId: 'é'.repeat(16), value: 1 }] }, { ...base, dataPoints: [{ dataFeedId: 'ETH', value: 1 }, { dataFeedId: 'ETH', value: 2 }] }, { ...base, dataPoints: [{ dataFeedId: 'ETH', value: -1 }] }]) {
      expect(() => protocol.SignedDataPackage.fromObj(json).toBytesHex()).toThrow()
    }
  })

  it('takes the gateway JSON as text too, and a feed id of more than 31 characters (signed as its keccak256)', () => {
    expect(parseDataPackage(JSON.stringify(real)).dataPoints[0]?.dataFeedId).toBe('AAVE')
    const long = parseDataPackage({ ...base, dataPoints: [{ dataFeedId: 'x'.repeat(40), value: 1 }] })
    expect(long.dataPoints[0]?.feedIdWord).toBe(`0x${protocol.SignedDataPackage.fromObj({ ...base, dataPoints: [{ dataFeedId: 'x'.repeat(40), value: 1 }] }).toBytesHex().slice(2, 66)}`)
  })
})

describe('parseSerializedDataPackage refuses', () => {
  const bytes = serializeSignedDataPackage(parseDataPackage(real))
  it.each([
    ['bytes one short', bytes.subarray(1)],
    ['bytes one long', Buffer.concat([Buffer.alloc(1), bytes])],
    ['fewer bytes than a trailer and signature', bytes.subarray(0, 70)],
  ])('%s', (_, input) => {
    expect(refusal(() => parseSerializedDataPackage(input))).toEqual({ code: 'PRICE_INVALID_RECORD', field: 'bytes' })
  })

  it('a feed id twice', () => {
    const one = Buffer.from(bytes.subarray(0, 64))
    const trailer = Buffer.from(bytes.subarray(64, 64 + 13))
    trailer[12] = 2
    expect(refusal(() => parseSerializedDataPackage(Buffer.concat([one, one, trailer, bytes.subarray(77)])))).toEqual({ code: 'PRICE_INVALID_RECORD', field: 'bytes' })
  })
})

describe('a signature RedStone refuses to recover from', () => {
  const CURVE_ORDER = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n
  const signature = Buffer.from(real['signature'] as string, 'base64')
  const variant = (change: (sig: Buffer) => void): Record<string, unknown> => {
    const copy = Buffer.from(signature)
    change(copy)
    return { ...real, signature: copy.toString('base64') }
  }
  const highS = variant((sig) => {
    const s = BigInt(`0x${sig.subarray(32, 64).toString('hex')}`)
    sig.set(Buffer.from((CURVE_ORDER - s).toString(16).padStart(64, '0'), 'hex'), 32)
    sig[64] = (sig[64] as number) === 27 ? 28 : 27
  })
  const v29 = variant((sig) => void (sig[64] = 29))
  const rZero = variant((sig) => sig.fill(0, 0, 32))

  it.each([['high s (the malleated twin)', highS], ['v of 29', v29], ['r of zero', rZero]])('is malformed: %s', (_, json) => {
    expect(() => protocol.recoverDeserializedSignerAddress(json)).toThrow()
    const pkg = parseDataPackage(json)
    const verdict = verifyDataPackage(pkg, manifest)
    expect(verdict.result).toBe('malformed')
    expect(verdict.signer).toBeUndefined()
    expect(refusal(() => recoverPackageSigner(pkg))).toEqual({ code: 'PRICE_INVALID_RECORD', field: 'signature' })
  })
})

describe('a package no signature can match', () => {
  it('is invalid when no public key recovers from its signature (r no point of the curve has as x), as RedStone cannot recover one', () => {
    const signature = Buffer.from(real['signature'] as string, 'base64')
    let json: Record<string, unknown> | undefined
    for (let r = 1; json === undefined; r++) {
      signature.fill(0, 0, 32)
      signature[31] = r
      const candidate = { ...real, signature: signature.toString('base64') }
      try {
        protocol.recoverDeserializedSignerAddress(candidate)
      } catch {
        json = candidate
      }
    }
    const pkg = parseDataPackage(json)
    for (const backend of ['native', 'noble'] as const) expect(verifyDataPackage(pkg, manifest, { secp256k1: backend })).toMatchObject({ result: 'invalid' })
    expect(verifyDataPackage(pkg, manifest).signer).toBeUndefined()
    expect(refusal(() => recoverPackageSigner(pkg))).toEqual({ code: 'PRICE_INVALID_RECORD', field: 'signature' })
  })

  it('is invalid when built by hand with a value its byte size cannot hold', () => {
    const pkg = parseDataPackage(real)
    const huge = { ...pkg, dataPoints: [{ ...(pkg.dataPoints[0] as (typeof pkg.dataPoints)[0]), value: 2n ** 256n }] }
    expect(verifyDataPackage(huge, manifest).result).toBe('invalid')
    expect(refusal(() => recoverPackageSigner(huge))).toEqual({ code: 'PRICE_INVALID_RECORD', field: 'dataPoints' })
  })
})

describe('a v of 0 or 1', () => {
  it('is read as 27 or 28 in gateway JSON, as RedStone reads it, and refused in the byte form, as RedStone refuses it', () => {
    const signature = Buffer.from(real['signature'] as string, 'base64')
    signature[64] = (signature[64] as number) - 27
    const json = { ...real, signature: signature.toString('base64') }
    expect(protocol.recoverDeserializedSignerAddress(json).toLowerCase()).toBe(String(real['signerAddress']).toLowerCase())
    const pkg = parseDataPackage(json)
    expect(verifyDataPackage(pkg, manifest).result).toBe('valid')
    const redstone = protocol.SignedDataPackage.fromObj(json).toBytesHex()
    expect(`0x${Buffer.from(serializeSignedDataPackage(pkg)).toString('hex')}`).toBe(redstone)
    // In the byte form RedStone's recovery (UniversalSigner) reads v as written, and takes 27 or 28 only.
    const bytes = Buffer.from(redstone.slice(2), 'hex')
    bytes[bytes.length - 1] = (bytes[bytes.length - 1] as number) - 27
    expect(verifyDataPackage(parseSerializedDataPackage(bytes), manifest, { dataServiceId: 'redstone-primary-prod' }).result).toBe('malformed')
  })
})

describe('parseSignerManifest', () => {
  const address = '0x8BB8F32Df04c8b654987DAaeD53D6B6091e3B774'
  it('reads services, plain addresses and periods (addresses lower-cased)', () => {
    const text = `{"dataServices": {"a": {"signers": ["${address}", {"address": "${address}", "from": 1, "until": 2}]}, "__proto__": {"signers": []}}}`
    const parsed = parseSignerManifest(text)
    expect(parsed.dataServices['a']?.signers).toEqual([{ address: address.toLowerCase() }, { address: address.toLowerCase(), from: 1, until: 2 }])
    expect(Object.hasOwn(parsed.dataServices, '__proto__')).toBe(true)
    expect(Object.getPrototypeOf(parsed.dataServices)).toBe(Object.prototype)
  })

  it.each([
    ['text that is not JSON', '{', 'manifest'],
    ['a document that is not an object', [], 'manifest'],
    ['no dataServices', {}, 'dataServices'],
    ['a service that is not an object', { dataServices: { a: [] } }, 'dataServices.a'],
    ['signers that are not an array', { dataServices: { a: { signers: address } } }, 'dataServices.a.signers'],
    ['an address that is not 0x + 40 hex', { dataServices: { a: { signers: ['0x1234'] } } }, 'dataServices.a.signers[0]'],
    ['a signer entry without address', { dataServices: { a: { signers: [{ from: 1 }] } } }, 'dataServices.a.signers[0].address'],
    ['a from that is not a safe integer ≥ 0', { dataServices: { a: { signers: [{ address, from: -1 }] } } }, 'dataServices.a.signers[0].from'],
    ['an until that is a string', { dataServices: { a: { signers: [{ address, until: '2026' }] } } }, 'dataServices.a.signers[0].until'],
    ['from not before until', { dataServices: { a: { signers: [{ address, from: 5, until: 5 }] } } }, 'dataServices.a.signers[0]'],
    ['an unknown field in a signer', { dataServices: { a: { signers: [{ address, since: 5 }] } } }, 'dataServices.a.signers[0].since'],
  ])('refuses %s', (_, json, field) => {
    expect(refusal(() => parseSignerManifest(json))).toEqual({ code: 'PRICE_INVALID_OPTIONS', field })
  })
})
