/**
 * Data packages made by RedStone's own code (@redstone-finance/protocol
 * 0.9.0: random keys, feed ids, values, byte sizes, timestamps) read back by
 * src/trust: the gateway JSON parses, serializes byte for byte as RedStone
 * serializes it, recovers to the address RedStone recovers, and verifies;
 * the on-chain byte form reads back to the same package. What RedStone's
 * code refuses to sign, parseDataPackage refuses too. Expectations come from
 * RedStone's code only.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { isPriceStoreError } from '../../../src/errors.js'
import { serializeDataPackage, serializeSignedDataPackage, parseSerializedDataPackage } from '../../../src/trust/package-bytes.js'
import { parseDataPackage } from '../../../src/trust/package-json.js'
import { recoverPackageSigner, verifyDataPackage } from '../../../src/trust/package-verify.js'
import { parseSignerManifest } from '../../../src/trust/signer-manifest.js'
import { addressOfKey, gatewayJson, signWithRedstone } from './redstone-protocol.js'
import { packageArb, privateKeyArb } from './package-arbitraries.js'

const SEED = 20261207
const hex = (bytes: Uint8Array): string => `0x${Buffer.from(bytes).toString('hex')}`

describe('data packages signed by RedStone', () => {
  it('parse, serialize byte for byte, recover and verify as RedStone says; what it cannot sign is refused', () => {
    let signedCount = 0
    let refusedCount = 0
    fc.assert(
      fc.property(packageArb, privateKeyArb, ({ points, timestamp }, key) => {
        const signed = signWithRedstone(points, timestamp, key, 'ID')
        if (signed instanceof Error) {
          refusedCount++
          const json = {
            dataPoints: points.map((p) => (p.kind === 'numeric' ? { dataFeedId: p.dataFeedId, value: p.value, decimals: p.decimals, valueByteSize: p.valueByteSize } : { dataFeedId: p.dataFeedId, value: Buffer.from(p.bytes).toString('base64') })),
            timestampMilliseconds: timestamp,
            signature: Buffer.alloc(65, 1).toString('base64'),
          }
          let thrown: unknown
          try {
            parseDataPackage(JSON.parse(JSON.stringify(json)))
          } catch (error) {
            thrown = error
          }
          expect(isPriceStoreError(thrown, 'PRICE_INVALID_RECORD'), `RedStone refused: ${signed.message}`).toBe(true)
          return
        }
        signedCount++
        const json = gatewayJson(signed, 'test-service')
        const pkg = parseDataPackage(json)
        expect(hex(serializeDataPackage(pkg))).toBe(signed.dataPackage.toBytesHex())
        expect(hex(serializeSignedDataPackage(pkg))).toBe(signed.toBytesHex())
        const address = signed.recoverSignerAddress().toLowerCase()
        expect(address).toBe(addressOfKey(key))
        for (const backend of ['native', 'noble'] as const) expect(recoverPackageSigner(pkg, { secp256k1: backend })).toBe(address)
        const manifest = parseSignerManifest({ dataServices: { 'test-service': { signers: [address] } } })
        expect(verifyDataPackage(pkg, manifest)).toEqual({ result: 'valid', signer: address })
        // The on-chain byte form reads back to the same signed integers, and verifies once told its service.
        const back = parseSerializedDataPackage(Buffer.from(signed.toBytesHex().slice(2), 'hex'))
        expect(hex(serializeSignedDataPackage(back))).toBe(signed.toBytesHex())
        expect(back.dataPoints.map((p) => [p.feedIdWord, p.value])).toEqual(pkg.dataPoints.map((p) => [p.feedIdWord, p.value]))
        expect(back.timestampMilliseconds).toBe(timestamp)
        expect(verifyDataPackage(back, manifest, { dataServiceId: 'test-service' })).toEqual({ result: 'valid', signer: address })
      }),
      { seed: SEED, numRuns: 300 },
    )
    // Both sides of the property were exercised.
    expect(signedCount).toBeGreaterThan(100)
    expect(refusedCount).toBeGreaterThan(5)
  })
})
