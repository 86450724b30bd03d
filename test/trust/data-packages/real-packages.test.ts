/**
 * Real data packages of RedStone's public data service redstone-primary-prod,
 * as its gateways served them (fixtures/redstone-primary-prod-packages.json
 * says where they and the signer list come from): each verifies against the
 * service's five published signers, recovers to the signer the gateway
 * named, and serializes byte for byte as RedStone's own code does.
 */
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { parseDataPackage, parseSerializedDataPackage, parseSignerManifest, serializeSignedDataPackage, verifyDataPackage } from '../../../src/trust.js'
import { protocol } from './redstone-protocol.js'

interface Fixture {
  readonly dataServiceId: string
  readonly signers: readonly string[]
  readonly response: Readonly<Record<string, readonly Record<string, unknown>[]>>
}
const fixture = JSON.parse(readFileSync(new URL('../fixtures/redstone-primary-prod-packages.json', import.meta.url), 'utf8')) as Fixture
const packages = Object.values(fixture.response).flat()
const manifest = parseSignerManifest({ dataServices: { [fixture.dataServiceId]: { signers: fixture.signers } } })
const hex = (bytes: Uint8Array): string => `0x${Buffer.from(bytes).toString('hex')}`

describe('real packages of redstone-primary-prod', () => {
  it('verify against the published signers, each recovering to the signer the gateway named', () => {
    expect(packages.length).toBe(9)
    for (const backend of ['native', 'noble'] as const) {
      for (const json of packages) {
        const verdict = verifyDataPackage(parseDataPackage(json), manifest, { secp256k1: backend })
        expect(verdict).toEqual({ result: 'valid', signer: String(json['signerAddress']).toLowerCase() })
      }
    }
    // Five distinct nodes signed the AAVE packages.
    expect(new Set(fixture.response['AAVE']?.map((json) => json['signerAddress'])).size).toBe(5)
  })

  it('serialize byte for byte as RedStone does, keeping the signed integer exactly', () => {
    for (const json of packages) {
      const redstone = protocol.SignedDataPackage.fromObj(json).toBytesHex()
      const pkg = parseDataPackage(json)
      expect(hex(serializeSignedDataPackage(pkg))).toBe(redstone)
      // The value's bytes, read from RedStone's serialization: the 32 bytes after the feed id.
      expect(pkg.dataPoints[0]?.value).toBe(BigInt(`0x${redstone.slice(2 + 64, 2 + 128)}`))
      expect(verifyDataPackage(parseSerializedDataPackage(Buffer.from(redstone.slice(2), 'hex')), manifest, { dataServiceId: fixture.dataServiceId }).result).toBe('valid')
    }
  })

  it('are invalid once a signed field changes, and not allowed for a service whose signers they are not', () => {
    const json = fixture.response['AAVE']?.[0] as Record<string, unknown>
    const point = (json['dataPoints'] as Record<string, unknown>[])[0] as Record<string, unknown>
    expect(verifyDataPackage(parseDataPackage({ ...json, dataPoints: [{ ...point, value: 252.98500001 }] }), manifest).result).toBe('invalid')
    expect(verifyDataPackage(parseDataPackage({ ...json, timestampMilliseconds: 1749397130001 }), manifest).result).toBe('invalid')
    expect(verifyDataPackage(parseDataPackage({ ...json, dataPoints: [{ ...point, dataFeedId: 'AAVE2' }] }), manifest).result).toBe('invalid')
    // The unsigned fields change nothing signed.
    expect(verifyDataPackage(parseDataPackage({ ...json, dataPackageId: 'X', isSignatureValid: false, metadata: {} }), manifest).result).toBe('valid')
    const elsewhere = parseSignerManifest({ dataServices: { [fixture.dataServiceId]: { signers: ['0x0000000000000000000000000000000000000001'] } } })
    expect(verifyDataPackage(parseDataPackage(json), elsewhere).result).toBe('signer-not-allowed')
  })
})
