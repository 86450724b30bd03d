/**
 * `price-store/trust`: the signatures of price records. The verdict of a
 * record (checked in the calling thread or in a pool of worker threads), the
 * signature options a store verifies its records under, and the report of
 * `store.verify()`. See docs/semantics.md, "Signature verdicts".
 * @packageDocumentation
 */
export { verifyRecord } from './trust/verify-record.js'
export { SignatureVerifier } from './trust/signature-verifier.js'
export type { SignatureVerifierOptions } from './trust/signature-verifier.js'
export { fieldCoverage } from './trust/verdict.js'
export type { RecordVerdict, SignatureCheck, SignatureKind } from './trust/verdict.js'
export type { AllowedSigners } from './trust/allowed-signers.js'
export type { SignatureOptions, SignaturePolicy } from './store/signatures/signature-options.js'
export type { VerifyOptions, VerifyReport } from './store/services/verify-report.js'
export { parseDataPackage } from './trust/package-json.js'
export { serializeDataPackage, serializeSignedDataPackage, parseSerializedDataPackage } from './trust/package-bytes.js'
export { recoverPackageSigner, verifyDataPackage } from './trust/package-verify.js'
export type { PackageVerdict, PackageVerifyOptions } from './trust/package-verify.js'
export type { DataPackage, DataPackagePoint } from './trust/data-package.js'
export { parseSignerManifest } from './trust/signer-manifest.js'
export type { SignerManifest, DataServiceSigners, AuthorisedSigner } from './trust/signer-manifest.js'
