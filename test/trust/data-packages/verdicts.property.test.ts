/**
 * Verdicts on packages RedStone's code signed: a changed value, timestamp or
 * feed id is `invalid`; a correct signature by a key the data service does
 * not list is `signer-not-allowed`, as is a listed signer outside its
 * validity period (from included, until excluded); inside it, `valid`.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { parseDataPackage } from '../../../src/trust/package-json.js'
import { verifyDataPackage } from '../../../src/trust/package-verify.js'
import { parseSignerManifest } from '../../../src/trust/signer-manifest.js'
import type { DataPackage } from '../../../src/trust/data-package.js'
import { type PackageSpec, packageArb, privateKeyArb } from './package-arbitraries.js'
import { addressOfKey, gatewayJson, signWithRedstone } from './redstone-protocol.js'

const SEED = 7122026
const SERVICE = 'test-service'

/** A package RedStone signed, as gateway JSON, with the signer's address; undefined when RedStone refused to sign it. */
function signedJson(spec: PackageSpec, key: string): Record<string, unknown> | undefined {
  const signed = signWithRedstone(spec.points, spec.timestamp, key)
  return signed instanceof Error ? undefined : gatewayJson(signed, SERVICE)
}

type Point = Record<string, unknown>
const pointsOf = (json: Record<string, unknown>): Point[] => json['dataPoints'] as Point[]

/** The JSON with one change a tamperer could make (one that may leave it unsignable: the test skips those). */
function tampered(json: Record<string, unknown>, how: 'value' | 'timestamp' | 'feedId', pick: number): Record<string, unknown> {
  const copy = structuredClone(json)
  const points = pointsOf(copy)
  const point = points[pick % points.length] as Point
  if (how === 'timestamp') copy['timestampMilliseconds'] = (json['timestampMilliseconds'] as number) + (pick % 2 === 0 ? 1 : -1)
  else if (how === 'feedId') point['dataFeedId'] = `${String(point['dataFeedId']).slice(0, 20)}~`
  else if (typeof point['value'] === 'number') point['value'] = (point['value'] as number) + 1
  else point['value'] = Buffer.from(Buffer.from(point['value'] as string, 'base64').map((b, i) => (i === 0 ? b ^ 1 : b))).toString('base64')
  return copy
}

function parsedOrUndefined(json: unknown): DataPackage | undefined {
  try {
    return parseDataPackage(json)
  } catch {
    return undefined
  }
}

describe('verdicts on packages signed by RedStone', () => {
  it('a changed value, timestamp or feed id is invalid', () => {
    fc.assert(
      fc.property(packageArb, privateKeyArb, fc.constantFrom('value', 'timestamp', 'feedId') as fc.Arbitrary<'value' | 'timestamp' | 'feedId'>, fc.nat(), (spec, key, how, pick) => {
        const json = signedJson(spec, key)
        fc.pre(json !== undefined)
        const manifest = parseSignerManifest({ dataServices: { [SERVICE]: { signers: [addressOfKey(key)] } } })
        const changed = parsedOrUndefined(tampered(json, how, pick))
        // A change that makes the package unsignable (a timestamp of -1, an id now duplicated) is refused at parse.
        fc.pre(changed !== undefined)
        const original = parseDataPackage(json)
        // A change that scales to the same signed integer (a value past 2^53 plus 1) changes nothing signed.
        fc.pre(JSON.stringify(changed, (_, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)) !== JSON.stringify(original, (_, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)))
        expect(verifyDataPackage(changed, manifest).result).toBe('invalid')
        // Without the claimed signerAddress the change is still caught: it recovers to none of the service's signers.
        const { signerAddress: _claimed, ...unclaimed } = changed
        expect(verifyDataPackage(unclaimed, manifest).result).toBe('invalid')
      }),
      { seed: SEED, numRuns: 150 },
    )
  })

  it('a signer the service does not list, or one outside its validity period, is signer-not-allowed', () => {
    fc.assert(
      fc.property(packageArb, privateKeyArb, privateKeyArb, (spec, key, otherKey) => {
        const json = signedJson(spec, key)
        fc.pre(json !== undefined && addressOfKey(key) !== addressOfKey(otherKey))
        const pkg = parseDataPackage(json)
        const address = addressOfKey(key)
        const time = spec.timestamp
        const verdict = (signers: unknown[]): string => verifyDataPackage(pkg, parseSignerManifest({ dataServices: { [SERVICE]: { signers } } })).result
        expect(verdict([addressOfKey(otherKey)])).toBe('signer-not-allowed')
        expect(verifyDataPackage(pkg, parseSignerManifest({ dataServices: { other: { signers: [address] } } })).result).toBe('signer-not-allowed')
        expect(verdict([{ address, until: time }])).toBe('signer-not-allowed')
        expect(verdict([{ address, from: time + 1 }])).toBe('signer-not-allowed')
        expect(verdict([{ address, from: time, until: time + 1 }])).toBe('valid')
        // A rotated key: its old period still holds its old packages.
        expect(verdict([{ address, until: time + 1 }, { address: addressOfKey(otherKey), from: time + 1 }])).toBe('valid')
        if (time > 0) expect(verdict([{ address, until: time }, { address, from: time }])).toBe('valid')
      }),
      { seed: SEED, numRuns: 100 },
    )
  })
})
