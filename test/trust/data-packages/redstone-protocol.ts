/**
 * RedStone's own code, @redstone-finance/protocol 0.9.0 (CommonJS, ethers 5),
 * as the oracle of the data-package tests: it builds, signs, serializes
 * (`toBytesHex`), writes the gateway JSON (`toObj`) and recovers signers.
 * Nothing here shares code with src/trust.
 */
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)

/** The parts of the protocol package the tests use. */
export interface RedstoneDataPoint {
  toObj(): Record<string, unknown>
}
export interface RedstoneSignedPackage {
  toBytesHex(): string
  toObj(): Record<string, unknown>
  recoverSignerAddress(): string
  dataPackage: { toBytesHex(): string }
}
interface Protocol {
  NumericDataPoint: new (args: { dataFeedId: string; value: number; decimals?: number; valueByteSize?: number }) => RedstoneDataPoint
  DataPoint: new (dataFeedId: string, value: Uint8Array) => RedstoneDataPoint
  DataPackage: new (points: RedstoneDataPoint[], timestampMilliseconds: number, dataPackageId?: string) => { sign(privateKey: string): RedstoneSignedPackage }
  SignedDataPackage: { fromObj(obj: unknown): RedstoneSignedPackage }
  recoverDeserializedSignerAddress(obj: unknown): string
}

export const protocol = require('@redstone-finance/protocol') as Protocol
// The ethers the protocol package itself loads (its dependency, ethers 5).
const ethers = createRequire(require.resolve('@redstone-finance/protocol'))('ethers') as { utils: { computeAddress(key: string): string } }

/** The EVM address of a private key (`0x` + 64 hex), by ethers. */
export function addressOfKey(privateKey: string): string {
  return ethers.utils.computeAddress(privateKey).toLowerCase()
}

/** A package signed by RedStone's code, or the error its code threw (a package it cannot sign). */
export function signWithRedstone(
  points: readonly ({ kind: 'numeric'; dataFeedId: string; value: number; decimals?: number; valueByteSize?: number } | { kind: 'bytes'; dataFeedId: string; bytes: Uint8Array })[],
  timestampMilliseconds: number,
  privateKey: string,
  dataPackageId?: string,
): RedstoneSignedPackage | Error {
  try {
    const made = points.map((point) =>
      point.kind === 'numeric'
        ? new protocol.NumericDataPoint({ dataFeedId: point.dataFeedId, value: point.value, ...(point.decimals === undefined ? {} : { decimals: point.decimals }), ...(point.valueByteSize === undefined ? {} : { valueByteSize: point.valueByteSize }) })
        : new protocol.DataPoint(point.dataFeedId, point.bytes),
    )
    return new protocol.DataPackage(made, timestampMilliseconds, dataPackageId).sign(privateKey)
  } catch (error) {
    return error as Error
  }
}

/** The gateway JSON of a signed package as the gateways serve it: toObj plus the service and signer fields they add. */
export function gatewayJson(signed: RedstoneSignedPackage, dataServiceId: string): Record<string, unknown> {
  return JSON.parse(JSON.stringify({ ...signed.toObj(), dataServiceId, signerAddress: signed.recoverSignerAddress() })) as Record<string, unknown>
}
