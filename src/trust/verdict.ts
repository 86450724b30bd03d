/**
 * What a signature check concludes about one record: per signature kind the
 * record carries, whether it holds, who signed, and which fields it vouches
 * for; and one overall verdict. Plain data (JSON-safe), so a store can keep
 * it next to the record and a report can print it unchanged.
 */

/** The signature kinds of RedStone records, by the field that carries each. */
export type SignatureKind = 'arweave' | 'lite-evm' | 'evm-typed'

/** The record field that carries each kind. */
export const SIGNATURE_FIELD: Readonly<Record<SignatureKind, 'signature' | 'liteEvmSignature' | 'evmSignature'>> = Object.freeze({
  arweave: 'signature',
  'lite-evm': 'liteEvmSignature',
  'evm-typed': 'evmSignature',
})

/**
 * The record fields each kind's signed message is built from (docs/semantics.md,
 * "Signature verdicts"). `lite-evm` and `evm-typed` hold `value` only to 10⁻⁸
 * (the signed integer is round(value × 10⁸)); `lite-evm` holds `timestamp`
 * only to the second (ceil(timestamp / 1000)); `evm-typed` holds `version` as
 * its EIP-712 domain version.
 */
export const SIGNATURE_COVERS: Readonly<Record<SignatureKind, readonly string[]>> = Object.freeze({
  arweave: Object.freeze(['id', 'source', 'symbol', 'timestamp', 'version', 'value', 'permawebTx', 'provider']),
  'lite-evm': Object.freeze(['symbol', 'value', 'timestamp']),
  'evm-typed': Object.freeze(['symbol', 'value', 'timestamp', 'version']),
})

/**
 * The result of one check (docs/semantics.md, "Signature verdicts"):
 * - `valid`: the signature matches the record's covered fields and its signer is allowed;
 * - `invalid`: well-formed, but it does not match: a covered field changed, fields no signer
 *   could have encoded (e.g. a negative value for an EVM kind), an Arweave signer other than
 *   the record's `provider`, or an EVM signature recovering to none of the provider's allowed
 *   addresses (recovery cannot tell an altered record from a stranger's signature);
 * - `malformed`: not a signature of its kind at all (wrong length, not hex/base64, high-s,
 *   empty, not a string, a public key that is not an RSA modulus);
 * - `signer-not-allowed`: a correct signature by a signer not allowed: another Arweave key
 *   than the provider's, or any EVM signer when the provider has no EVM address configured.
 */
export type CheckResult = 'valid' | 'invalid' | 'malformed' | 'signer-not-allowed'

/** One signature kind checked on one record. */
export interface SignatureCheck {
  readonly kind: SignatureKind
  readonly result: CheckResult
  /**
   * Who signed, when it could be told: the Arweave address of the key checked (`arweave`),
   * or the EVM address recovered (lower-case `0x…`, EVM kinds). Absent for `malformed`.
   */
  readonly signer?: string
  /** The fields this kind covers (SIGNATURE_COVERS[kind]). */
  readonly covers: readonly string[]
  /** Why, for every result but `valid`: one sentence for an operator. */
  readonly reason?: string
}

/**
 * The verdict over a record: `unsigned` when it carries no signature kind,
 * `valid` when every kind it carries is valid, else the worst failing
 * result among its checks (`invalid` before `malformed` before
 * `signer-not-allowed`: a signature that does not match is the one that
 * says "altered").
 */
export type OverallVerdict = 'valid' | 'unsigned' | Exclude<CheckResult, 'valid'>

/** The verdict kept with a record. */
export interface RecordVerdict {
  readonly overall: OverallVerdict
  /** One check per signature kind present, in the order arweave, lite-evm, evm-typed. */
  readonly checks: readonly SignatureCheck[]
}

/** What a verdict says about one field: vouched for by a valid signature, covered only by failing ones, or covered by none. */
export type FieldCoverage = 'verified' | 'fails' | 'not-covered'

const FAILING_ORDER: readonly Exclude<CheckResult, 'valid'>[] = ['invalid', 'malformed', 'signer-not-allowed']

/** The overall verdict of a list of checks (see OverallVerdict). */
export function overallOf(checks: readonly SignatureCheck[]): OverallVerdict {
  if (checks.length === 0) return 'unsigned'
  for (const result of FAILING_ORDER) if (checks.some((check) => check.result === result)) return result
  return 'valid'
}

/**
 * Whether `field` of the record is vouched for: `verified` when a valid
 * check covers it (one valid signature by an allowed signer is enough, even
 * if another kind fails: that kind's failure may come from a field this one
 * does not cover), `fails` when only failing checks cover it, `not-covered`
 * when no check present covers it (e.g. `source` under a lone `lite-evm`).
 */
export function fieldCoverage(verdict: RecordVerdict, field: string): FieldCoverage {
  const covering = verdict.checks.filter((check) => check.covers.includes(field))
  if (covering.length === 0) return 'not-covered'
  return covering.some((check) => check.result === 'valid') ? 'verified' : 'fails'
}
