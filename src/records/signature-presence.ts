/**
 * Which signatures a record carries, and how a stored record without an
 * Arweave `signature` keeps that absence.
 *
 * RedStone's records carry up to three signature kinds: the Arweave RSA
 * `signature`, `liteEvmSignature` and the EIP-712 `evmSignature`. Its API
 * served records with a `liteEvmSignature` and no `signature` at all, so any
 * one kind makes a record signed. A stored value always has a signature slot
 * (keys/value-codec.ts); a record without `signature` keeps the empty text
 * there, which nothing else can: validation never stores an empty signature
 * for a record that has one. The value codec (keys/value-codec.ts) reads that
 * slot back as an absent field, so every record and answer built from stored
 * bytes holds exactly the fields written.
 */

/** What the signature slot of a stored value holds for a record written without `signature`. */
export const ABSENT_SIGNATURE = ''

/** The EVM signature kinds' fields, which a record may carry instead of (or beside) `signature`. */
export const EVM_SIGNATURE_FIELDS = ['liteEvmSignature', 'evmSignature'] as const

// The shape every EVM signature RedStone wrote has (r ‖ s ‖ v, 65 bytes in hex); whether it holds is the verifier's call.
const EVM_SIGNATURE_SHAPE = /^0x[0-9a-fA-F]{130}$/

/** Whether `value` is written as an EVM signature (`0x` and 130 hex digits), so it can stand as the record's signature. */
export function isEvmSignatureText(value: unknown): boolean {
  return typeof value === 'string' && value.length === 132 && EVM_SIGNATURE_SHAPE.test(value)
}

/** Whether `record` carries a `liteEvmSignature` or `evmSignature` written as an EVM signature. */
export function carriesEvmSignature(record: Readonly<Record<string, unknown>>): boolean {
  return EVM_SIGNATURE_FIELDS.some((field) => Object.hasOwn(record, field) && isEvmSignatureText(record[field]))
}
