/**
 * The bytes of a record's signature verdict: each distinct verdict of a
 * verdict group (verdict-group-codec.ts).
 * Small, because a store may keep many:
 * what can be derived is not stored (the fields a kind covers, the overall
 * verdict), and the commonest signer, the record's own provider (an Arweave
 * signature by its key), is one flag. A valid Arweave verdict is 3 bytes.
 *
 * ```
 * version (1 byte, 1) · count (1 byte) · per check:
 *   kind (1 byte) · result (1 byte) · signer tag (1 byte)
 *   [signer: tag 2 → 20 bytes of an EVM address; tag 3 → text] · [reason text, when the result is not valid]
 * ```
 * Texts are a varint length and UTF-8 bytes.
 */
import type { CheckResult, RecordVerdict, SignatureCheck, SignatureKind } from '../trust/verdict.js'
import { SIGNATURE_COVERS, overallOf } from '../trust/verdict.js'
import { ByteReader, ByteWriter, MalformedBytes } from './bytes.js'

const VERSION = 1
const KINDS: readonly SignatureKind[] = ['arweave', 'lite-evm', 'evm-typed']
const RESULTS: readonly CheckResult[] = ['valid', 'invalid', 'malformed', 'signer-not-allowed']
/** How a check's signer is stored. */
const SIGNER_NONE = 0
const SIGNER_PROVIDER = 1
const SIGNER_EVM = 2
const SIGNER_TEXT = 3
const EVM_ADDRESS = /^0x[0-9a-f]{40}$/

const writer = new ByteWriter(64)

/**
 * The bytes of `verdict` for a record of provider `providerId`.
 * @throws RangeError for a verdict with more than 255 checks or a kind or result this codec does not know
 */
export function encodeVerdict(verdict: RecordVerdict, providerId: string): Buffer {
  writer.reset().byte(VERSION)
  if (verdict.checks.length > 255) throw new RangeError(`a verdict holds at most 255 checks, not ${verdict.checks.length}`)
  writer.byte(verdict.checks.length)
  for (const check of verdict.checks) {
    writer.byte(codeOf(KINDS, check.kind, 'kind')).byte(codeOf(RESULTS, check.result, 'result'))
    const { signer } = check
    if (signer === undefined) writer.byte(SIGNER_NONE)
    else if (signer === providerId) writer.byte(SIGNER_PROVIDER)
    else if (EVM_ADDRESS.test(signer)) writer.byte(SIGNER_EVM).bytes(Buffer.from(signer.slice(2), 'hex'))
    else writer.byte(SIGNER_TEXT).text(signer)
    if (check.result !== 'valid') writer.text(check.reason ?? '')
  }
  return Buffer.from(writer.view())
}

/**
 * The verdict `bytes` hold, for a record of provider `providerId`.
 * @throws MalformedBytes when they do not parse
 */
export function decodeVerdict(bytes: Uint8Array, providerId: string): RecordVerdict {
  const reader = new ByteReader(bytes)
  const version = reader.byte()
  if (version !== VERSION) throw new MalformedBytes(`a verdict of version ${version}, this store reads version ${VERSION}`)
  const count = reader.byte()
  const checks: SignatureCheck[] = []
  for (let i = 0; i < count; i++) {
    const kind = KINDS[reader.byte()]
    const result = RESULTS[reader.byte()]
    if (kind === undefined || result === undefined) throw new MalformedBytes(`a verdict check of an unknown kind or result at offset ${reader.offset - 2}`)
    const tag = reader.byte()
    let signer: string | undefined
    if (tag === SIGNER_PROVIDER) signer = providerId
    else if (tag === SIGNER_EVM) signer = `0x${reader.bytes.toString('hex', reader.skip(20), reader.offset)}`
    else if (tag === SIGNER_TEXT) signer = reader.text()
    else if (tag !== SIGNER_NONE) throw new MalformedBytes(`a verdict signer tag ${tag} at offset ${reader.offset - 1}`)
    const reason = result === 'valid' ? undefined : reader.text()
    checks.push({
      kind, result, covers: SIGNATURE_COVERS[kind],
      ...(signer === undefined ? {} : { signer }),
      ...(reason === undefined || reason === '' ? {} : { reason }),
    })
  }
  if (!reader.done) throw new MalformedBytes(`${bytes.length - reader.offset} bytes after a verdict`)
  return { overall: overallOf(checks), checks }
}

function codeOf<T>(table: readonly T[], value: T, what: string): number {
  const code = table.indexOf(value)
  if (code < 0) throw new RangeError(`a verdict ${what} ${String(value)} this codec does not know`)
  return code
}
