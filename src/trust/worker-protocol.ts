/**
 * What SignatureVerifier and its workers say to each other, in the compact
 * forms that keep the calling thread's share of a batch small (on a machine
 * with as many workers as cores, every microsecond that thread spends per
 * record is taken from a verification):
 * - Out: the JSON text of an array of the records, each cut to the fields
 *   verifyRecord reads ({@link verificationInput}), posted as a string:
 *   the clone of a string is one copy, where UTF-8 bytes cost an encode
 *   here and a decode there, and a structured clone of objects a walk over
 *   every field.
 * - Back: a batch's verdicts are nearly all alike (a stream of one
 *   provider's valid records has one verdict), so a reply is the JSON of
 *   its distinct verdicts ("shapes") plus one Uint32Array index per record,
 *   transferred. The caller parses a handful of verdicts instead of
 *   thousands, and records with the same verdict share one (read-only) object.
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

/** A chunk of records to verify: `text` is the JSON of an array of records (see {@link encodeRecords}). */
export interface VerifyRequest {
  readonly id: number
  readonly text: string
}

/** The verdicts of a chunk ({@link encodeVerdicts}), or why the worker could not. */
export type VerifyReply =
  | { readonly id: number; readonly shapes: string; readonly indices: Uint32Array; readonly cacheHits: number; readonly cacheMisses: number }
  | { readonly id: number; readonly error: string }

/** Every field verifyRecord reads; the rest of a record (extras, the store's own) does not reach a worker. */
const VERIFIED_FIELDS = [
  'id', 'source', 'symbol', 'timestamp', 'version', 'value', 'permawebTx', 'provider',
  'signature', 'liteEvmSignature', 'evmSignature', 'providerPublicKey',
] as const

const hasOwn = Object.prototype.hasOwnProperty
const isEnumerable = Object.prototype.propertyIsEnumerable

/**
 * The part of `record` a worker needs: its own enumerable fields among those
 * verifyRecord reads, so its JSON is what the JSON of the whole record would
 * give the worker for them (a record with a `toJSON`, which JSON would call,
 * and an array, whose JSON has no named fields, are kept whole). `omitKey`: leave `providerPublicKey` out (the caller
 * knows it is the provider's configured key, which the worker has).
 */
export function verificationInput(record: Readonly<Record<string, unknown>>, omitKey = false): Readonly<Record<string, unknown>> {
  if (typeof record['toJSON'] === 'function' || Array.isArray(record)) return record
  const input: Record<string, unknown> = {}
  for (const field of VERIFIED_FIELDS) {
    if (omitKey && field === 'providerPublicKey') continue
    if (hasOwn.call(record, field) && isEnumerable.call(record, field)) input[field] = record[field]
  }
  return input
}

/** The JSON text of one record's {@link verificationInput}; undefined when JSON cannot carry it (a BigInt, a cycle). */
export function encodeRecord(record: Readonly<Record<string, unknown>>, omitKey = false): string | undefined {
  try {
    return JSON.stringify(verificationInput(record, omitKey)) as string | undefined
  } catch {
    return undefined
  }
}

/** A request's text from records already encoded with {@link encodeRecord}. */
export function encodeRecords(encoded: readonly string[]): string {
  return `[${encoded.join(',')}]`
}

/** The records of a request's text (anything that is not an object becomes `{}`: verified as unsigned). */
export function decodeRecords(text: string): Record<string, unknown>[] {
  const values = JSON.parse(text) as unknown[]
  return values.map((value) => (value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {}))
}

/** Verdicts in reply form: the JSON of the distinct ones, and each record's index among them. */
export function encodeVerdicts(verdicts: readonly RecordVerdict[]): { shapes: string; indices: Uint32Array } {
  const indices = new Uint32Array(verdicts.length)
  const known = new Map<string, number>()
  const shapes: string[] = []
  verdicts.forEach((verdict, position) => {
    const json = JSON.stringify(verdict)
    let index = known.get(json)
    if (index === undefined) {
      index = shapes.length
      known.set(json, index)
      shapes.push(json)
    }
    indices[position] = index
  })
  return { shapes: `[${shapes.join(',')}]`, indices }
}

/** The verdicts of a reply, in order; records with equal verdicts share one object. */
export function decodeVerdicts(shapes: string, indices: Uint32Array): RecordVerdict[] {
  const distinct = JSON.parse(shapes) as RecordVerdict[]
  const verdicts = new Array<RecordVerdict>(indices.length)
  for (let i = 0; i < indices.length; i++) verdicts[i] = distinct[indices[i] as number] as RecordVerdict
  return verdicts
}
