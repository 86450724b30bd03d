/**
 * Who signed a data package, and whether that signer may sign for its data
 * service at the package's time. The digest is keccak256 of the package's
 * signed bytes (`serializeDataPackage`); the signature is checked as
 * @redstone-finance/protocol's `UniversalSigner` checks it before recovery
 * (v 27 or 28, low s), and recovered with the project's secp256k1 code.
 */
import { keccak_256 } from '@noble/hashes/sha3'
import { PriceStoreError } from '../errors.js'
import type { DataPackage } from './data-package.js'
import { parseEvmSignature } from './evm-signature.js'
import { serializeDataPackage } from './package-bytes.js'
import { type Secp256k1Backend, recoverAddress } from './secp256k1-recover.js'
import { type SignerManifest, signersOf } from './signer-manifest.js'
import type { CheckResult } from './verdict.js'

/** Options of `recoverPackageSigner` and `verifyDataPackage`. */
export interface PackageVerifyOptions {
  /** The secp256k1 backend (`native` when it loads, else `noble`); both give the same answers. */
  readonly secp256k1?: Secp256k1Backend
  /** The data service whose signers apply; the package's own `dataServiceId` (unsigned) when absent. */
  readonly dataServiceId?: string
}

/** What `verifyDataPackage` concludes (the result vocabulary of docs/semantics.md, "Signature verdicts"). */
export interface PackageVerdict {
  readonly result: CheckResult
  /** The recovered signer, lower-case `0x…`; absent for `malformed`. */
  readonly signer?: string
  /** Why, for every result but `valid`: one sentence for an operator. */
  readonly reason?: string
}

/** The recovered signer, or why the signature is malformed, or why no signature can match. */
function recover(pkg: DataPackage, backend: Secp256k1Backend | undefined): { signer: string } | { malformed: string } | { unsignable: string; field: 'dataPoints' | 'signature' } {
  const v = /^0x[0-9a-fA-F]{130}$/.test(pkg.signature) ? Number.parseInt(pkg.signature.slice(130), 16) : undefined
  // RedStone's recovery takes v 27 or 28 only (a 0 or 1 is refused before recovery).
  if (v !== undefined && v !== 27 && v !== 28) return { malformed: `v is ${v} (27 or 28 expected)` }
  const parsed = parseEvmSignature(pkg.signature)
  if (typeof parsed === 'string') return { malformed: `the signature is ${parsed}` }
  let bytes: Uint8Array
  try {
    bytes = serializeDataPackage(pkg)
  } catch (error) {
    return { unsignable: (error as Error).message, field: 'dataPoints' }
  }
  const signer = recoverAddress(keccak_256(bytes), parsed, backend)
  // Whether a key recovers depends on the digest too: like a record's, that is a signature that does not match.
  return signer === undefined ? { unsignable: 'no public key recovers from this signature and the signed bytes', field: 'signature' } : { signer }
}

/**
 * The EVM address (lower-case `0x…`) that signed the package: secp256k1
 * recovery from keccak256 of its signed bytes.
 * @throws PriceStoreError `PRICE_INVALID_RECORD` (`details.field` `signature`) when the signature is malformed: v not
 *   27 or 28, r or s out of range, a high s, or no public key recovering from it and the signed bytes;
 *   `details.field` `dataPoints` when a value does not fit the package's byte size.
 */
export function recoverPackageSigner(pkg: DataPackage, options: PackageVerifyOptions = {}): string {
  const recovered = recover(pkg, options.secp256k1)
  if ('malformed' in recovered) throw new PriceStoreError('PRICE_INVALID_RECORD', `data package: \`signature\` is malformed: ${recovered.malformed}`, { details: { field: 'signature' } })
  if ('unsignable' in recovered) throw new PriceStoreError('PRICE_INVALID_RECORD', `data package: ${recovered.unsignable}`, { details: { field: recovered.field } })
  return recovered.signer
}

/**
 * Verifies a package against a signer manifest:
 * - `valid`: it recovers to a signer of its data service whose validity period holds the package's timestamp;
 * - `invalid`: it recovers to an address other than the `signerAddress` it carries (the signed fields were altered,
 *   or the signature is another key's), or, carrying none, to no signer of its service (an altered package and a
 *   stranger's signature cannot be told apart);
 *   A package from which no public key recovers, or whose values do not fit its byte size (built by hand), is
 *   `invalid` too: nothing can have signed it;
 * - `malformed`: the signature is not one RedStone accepts (v not 27/28, r or s out of range, high s);
 * - `signer-not-allowed`: a correct signature by an address the service does not list (its claimed `signerAddress`),
 *   by a listed signer outside its validity period, or for a data service the manifest does not name.
 */
export function verifyDataPackage(pkg: DataPackage, signers: SignerManifest, options: PackageVerifyOptions = {}): PackageVerdict {
  const recovered = recover(pkg, options.secp256k1)
  if ('malformed' in recovered) return { result: 'malformed', reason: recovered.malformed }
  if ('unsignable' in recovered) return { result: 'invalid', reason: `no signature can match: ${recovered.unsignable}` }
  const { signer } = recovered
  if (pkg.signerAddress !== undefined && pkg.signerAddress.toLowerCase() !== signer) {
    return { result: 'invalid', signer, reason: `it recovers to ${signer}, not the signerAddress ${pkg.signerAddress} it carries: the signed fields were altered, or another key signed` }
  }
  const service = options.dataServiceId ?? pkg.dataServiceId
  const listed = service === undefined ? undefined : signersOf(signers, service)
  if (service === undefined || listed === undefined) {
    return { result: 'signer-not-allowed', signer, reason: service === undefined ? 'the package names no data service' : `the manifest names no data service ${service}` }
  }
  const entries = listed.filter((entry) => entry.address === signer)
  const time = pkg.timestampMilliseconds
  if (entries.some((entry) => (entry.from === undefined || entry.from <= time) && (entry.until === undefined || time < entry.until))) return { result: 'valid', signer }
  if (entries.length > 0) return { result: 'signer-not-allowed', signer, reason: `${signer} signs for ${service}, but not at ${time} (outside its validity period)` }
  if (pkg.signerAddress !== undefined) return { result: 'signer-not-allowed', signer, reason: `${signer} is not a signer of ${service}` }
  return { result: 'invalid', signer, reason: `it recovers to ${signer}, none of the signers of ${service}: the signed fields were altered, or another key signed` }
}
