/**
 * verifyRecord: every signature kind a record carries, checked against the
 * allowed signers, in the calling thread. Pure apart from an optional cache;
 * never throws on hostile records (anything odd becomes `malformed` or
 * `invalid` with a reason). SignatureVerifier runs this same function in
 * worker threads for batches.
 */
import * as nodeCrypto from 'node:crypto'
import { constants, createHash, verify as rsaVerify } from 'node:crypto'
import { signerTable, type AllowedSigners, type SignerTable } from './allowed-signers.js'
import { arweaveAddressOf, modulusBytes, rsaKeyOf } from './arweave-key.js'
import { arweaveSignedText } from './arweave-message.js'
import { liteDigest, typedDigest, type Digest } from './evm-message.js'
import { parseEvmSignature } from './evm-signature.js'
import { recoverAddress, type Secp256k1Backend } from './secp256k1-recover.js'
import { VerificationCache } from './verification-cache.js'
import { SIGNATURE_COVERS, SIGNATURE_FIELD, overallOf, type CheckResult, type RecordVerdict, type SignatureCheck, type SignatureKind } from './verdict.js'

/** How to verify, besides who may sign. */
export interface VerifyOptions {
  /** The EIP-712 domain chainId of `evmSignature` (default 1, every public RedStone manifest's). */
  readonly evmChainId?: number
  /** The secp256k1 backend (default: native when its prebuilt binding loads, else noble). */
  readonly secp256k1?: Secp256k1Backend
  /** Outcomes already computed, and where to keep new ones. */
  readonly cache?: VerificationCache
}

const STANDARD_BASE64 = /^[A-Za-z0-9+/]*={0,2}$/
const URL_BASE64 = /^[A-Za-z0-9_-]*$/

/**
 * The bytes of a signature in base64 (RedStone wrote standard base64, Buffer#toString('base64')) or base64url;
 * undefined when the text is neither. Node's decoder skips characters it does not know, so the text must be
 * checked: when it is the canonical text of its own bytes, every character was base64 (the common case, and a
 * comparison is ~6× cheaper than the patterns' scan of ~700 characters); otherwise the patterns decide, so
 * unpadded or non-canonical text is accepted as before.
 */
function decodeBase64(text: string): Buffer | undefined {
  const encoding = text.includes('-') || text.includes('_') ? 'base64url' : 'base64'
  const bytes = Buffer.from(text, encoding)
  if (bytes.toString(encoding) === text) return bytes
  return STANDARD_BASE64.test(text) || URL_BASE64.test(text) ? bytes : undefined
}

/** SHA-256 in base64: Node's one-shot `crypto.hash` where it exists (Node ≥ 20.12; no Hash object per call), else a Hash. */
// Read off the namespace, not imported by name: a named import Node's builtin lacks fails the whole module.
const oneShotHash = (nodeCrypto as { hash?: typeof nodeCrypto.hash }).hash
const sha256Base64: (text: string) => string = typeof oneShotHash === 'function'
  ? (text) => oneShotHash('sha256', text, 'base64')
  : (text) => createHash('sha256').update(text).digest('base64')

/** The signer table of `signers`, or `signers` itself when it is one already (so batches build it once). */
export function tableOf(signers: AllowedSigners | SignerTable): SignerTable {
  return 'providers' in signers ? signerTable(signers) : signers
}

/**
 * Checks each signature kind `record` carries (`signature`, `liteEvmSignature`,
 * `evmSignature`: a kind is present when its field is not undefined) and sums
 * them up. `record` is any object, e.g. a record as given to putMany or as a
 * query returns it (with `providerPublicKey`).
 */
export function verifyRecord(record: Readonly<Record<string, unknown>>, signers: AllowedSigners | SignerTable, options: VerifyOptions = {}): RecordVerdict {
  const table = tableOf(signers)
  const checks: SignatureCheck[] = []
  if (record['signature'] !== undefined) checks.push(checkArweave(record, table, options.cache))
  if (record['liteEvmSignature'] !== undefined) checks.push(checkEvm('lite-evm', record, liteDigest(record), table, options))
  if (record['evmSignature'] !== undefined) checks.push(checkEvm('evm-typed', record, typedDigest(record, options.evmChainId ?? 1), table, options))
  return { overall: overallOf(checks), checks }
}

function check(kind: SignatureKind, result: CheckResult, signer: string | undefined, reason: string | undefined): SignatureCheck {
  return {
    kind,
    result,
    ...(signer === undefined ? {} : { signer }),
    covers: SIGNATURE_COVERS[kind],
    ...(reason === undefined ? {} : { reason }),
  }
}

function checkArweave(record: Readonly<Record<string, unknown>>, table: SignerTable, cache: VerificationCache | undefined): SignatureCheck {
  const malformed = (reason: string, signer?: string): SignatureCheck => check('arweave', 'malformed', signer, reason)
  const signature = record['signature']
  if (typeof signature !== 'string') return malformed('`signature` is not a string')
  if (signature === '') return malformed('`signature` is empty')
  const bytes = decodeBase64(signature)
  if (bytes === undefined) return malformed('`signature` is not base64')
  const provider = record['provider']
  const carried = record['providerPublicKey']
  const publicKey = typeof carried === 'string' ? carried : typeof provider === 'string' ? table.arweaveKeyOf(provider) : undefined
  if (publicKey === undefined) return check('arweave', 'signer-not-allowed', undefined, 'the record carries no providerPublicKey and no key is configured for its provider')
  const key = rsaKeyOf(publicKey)
  if (key === null) return malformed('the public key is not an RSA modulus of 2048 to 4096 bits (base64url)')
  const signer = arweaveAddressOf(publicKey)
  if (bytes.length !== modulusBytes(key)) return malformed(`\`signature\` is ${bytes.length} bytes, the key's modulus ${modulusBytes(key)}`, signer)
  const text = arweaveSignedText(record)
  // One digest over the signer, the signature and the signed text: a key of 45 characters instead of the ~700 of the
  // signature itself, so a worker's cache of 100,000 outcomes holds a few MB instead of ~80 MB for its GC to walk.
  const cacheKey = cache === undefined || cache.capacity <= 0 ? '' : `a${sha256Base64(`${signer}\n${signature}\n${text}`)}`
  let holds = cache?.get(cacheKey)
  if (typeof holds !== 'boolean') {
    // PSS with the salt length read from the signature: arweave-js signs with Node's default
    // (the longest salt, 478 bytes for 4096-bit keys) and its WebCrypto driver with 32; its
    // own verifier, like this one, takes either.
    holds = rsaVerify('sha256', Buffer.from(text, 'utf8'), { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: constants.RSA_PSS_SALTLEN_AUTO }, bytes)
    cache?.set(cacheKey, holds)
  }
  if (!holds) return check('arweave', 'invalid', signer, 'the signature does not match the signed fields under this key')
  if (signer !== provider) return check('arweave', 'invalid', signer, `signed by ${signer}, but the record names provider ${String(provider)}`)
  if (!table.allowsArweaveKey(signer, publicKey)) return check('arweave', 'signer-not-allowed', signer, `${signer} is not an allowed Arweave signer`)
  return check('arweave', 'valid', signer, undefined)
}

function checkEvm(kind: 'lite-evm' | 'evm-typed', record: Readonly<Record<string, unknown>>, digest: Digest, table: SignerTable, options: VerifyOptions): SignatureCheck {
  const field = SIGNATURE_FIELD[kind]
  const parsed = parseEvmSignature(record[field])
  if (typeof parsed === 'string') return check(kind, 'malformed', undefined, `\`${field}\` is ${parsed}`)
  if ('unsignable' in digest) return check(kind, 'invalid', undefined, `no signature can match: ${digest.unsignable}`)
  const cacheKey = options.cache === undefined ? '' : `${kind}\n${record[field] as string}\n${Buffer.from(digest.digest).toString('base64')}`
  let signer = options.cache?.get(cacheKey)
  if (typeof signer !== 'string') {
    signer = recoverAddress(digest.digest, parsed, options.secp256k1) ?? ''
    options.cache?.set(cacheKey, signer)
  }
  if (signer === '') return check(kind, 'invalid', undefined, 'no public key recovers from this signature and the signed fields')
  const provider = typeof record['provider'] === 'string' ? record['provider'] : undefined
  if (provider !== undefined && table.allowsEvm(provider, signer)) return check(kind, 'valid', signer, undefined)
  // Recovery always yields some address: an altered record and a stranger's signature look
  // alike (neither recovers to an allowed signer). With signers configured for the provider
  // that is `invalid`; with none, nothing can be attributed, and the signer is just not allowed.
  if (provider === undefined || !table.hasEvmSigners(provider)) {
    return check(kind, 'signer-not-allowed', signer, `no EVM signer is configured for provider ${String(record['provider'])}; it recovers to ${signer}`)
  }
  return check(kind, 'invalid', signer, `it recovers to ${signer}, none of the allowed signers of ${provider}: the covered fields were altered, or another key signed`)
}
