/**
 * What SignatureVerifier and its workers say to each other. Records go out
 * and verdicts come back as UTF-8 JSON in an ArrayBuffer that is
 * transferred, not copied: one structured-clone walk over thousands of
 * record objects would cost the event loop more than JSON does.
 */
import type { AllowedSigners } from './allowed-signers.js'
import type { Secp256k1Backend } from './secp256k1-recover.js'
import type { RecordVerdict } from './verdict.js'

/** Given to each worker at start (workerData). */
export interface WorkerSetup {
  readonly signers: AllowedSigners
  readonly evmChainId: number
  readonly secp256k1: Secp256k1Backend
  readonly cacheSize: number
}

/** A chunk of records to verify: `bytes` is the JSON of an array of records. */
export interface VerifyRequest {
  readonly id: number
  readonly bytes: Uint8Array
}

/** The verdicts of a chunk, in its order (`bytes`: the JSON of RecordVerdict[]), or why the worker could not. */
export type VerifyReply =
  | { readonly id: number; readonly bytes: Uint8Array; readonly cacheHits: number; readonly cacheMisses: number }
  | { readonly id: number; readonly error: string }

const encoder = new TextEncoder()
const decoder = new TextDecoder()

/** JSON bytes of a value, ready to transfer. */
export function encodeJson(value: unknown): Uint8Array {
  return encoder.encode(JSON.stringify(value))
}

/** The value of JSON bytes. */
export function decodeJson<T>(bytes: Uint8Array): T {
  return JSON.parse(decoder.decode(bytes)) as T
}

/** The verdicts of a reply. */
export function decodeVerdicts(bytes: Uint8Array): RecordVerdict[] {
  return decodeJson<RecordVerdict[]>(bytes)
}
