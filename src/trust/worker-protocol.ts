/**
 * What SignatureVerifier and its workers say to each other, in the compact
 * forms that keep the calling thread's share of a batch small (on a machine
 * with as many workers as cores, every microsecond that thread spends per
 * record is taken from a verification):
 * - Out: the JSON text of an array of the records, each cut to the fields
 *   verifyRecord reads ({@link verificationInput}), posted as a string:
 *   the clone of a string is one copy, where UTF-8 bytes cost an encode
 *   here and a decode there, and a structured clone of objects a walk over
 *   every field. A string `signature` (an Arweave one is ~700 characters,
 *   the longest field) goes beside the text in an array of strings, which
 *   the clone copies, where JSON would scan it twice (~2 µs a record on
 *   each side, on a slow core). Or, from a caller whose workers run an
 *   entry of its own (a store's), records in its own encoding in shared
 *   memory, which no thread copies ({@link EncodedChunk}).
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
  /** For a worker entry of the caller's own, what it needs to decode {@link EncodedChunk}s (a store's: its provider). */
  readonly context?: unknown
}

/**
 * A chunk of records to verify: as a {@link RequestBuilder} makes it, or in a caller's own encoding. Every worker is
 * sent every chunk; the first
 * to reach it claims it (its slot in `claims` from 0 to 1) and answers, the others pass it by.
 */
export type VerifyRequest = (JsonChunk | EncodedChunk) & {
  readonly id: number
  /** Shared by the workers: one slot per chunk of the batch. */
  readonly claims: Int32Array
  /** This chunk's slot in `claims`. */
  readonly claim: number
}

/** Records as a {@link RequestBuilder} sends them. */
export interface JsonChunk {
  /** The JSON of an array of the records, each without its `signature` where that is in `signatures`. */
  readonly text: string
  /** Per record, its `signature` when that is a string sent beside the JSON, else null. */
  readonly signatures: readonly (string | null)[]
}

/**
 * Records in the caller's own encoding, in shared memory (not copied to each worker), for a worker entry of the
 * caller's own that decodes them (the second argument of SignatureVerifier's constructor).
 */
export interface EncodedChunk {
  readonly encoded: Uint8Array
}

/** Outcomes another worker computed (its cache's learned text), to keep in this worker's cache. */
export interface RememberRequest {
  readonly learned: string
}

/** What a worker is sent. */
export type WorkerRequest = VerifyRequest | RememberRequest

/**
 * The verdicts of a chunk ({@link encodeVerdicts}) and the outcomes its verification added to the worker's cache
 * (`learned`, for the other workers), or why the worker could not.
 */
export type VerifyReply =
  | { readonly id: number; readonly shapes: string; readonly indices: Uint32Array; readonly cacheHits: number; readonly cacheMisses: number; readonly learned: string }
  | { readonly id: number; readonly error: string }

/** Takes a chunk for this worker; false when another worker took it first. */
export function claimChunk(request: VerifyRequest): boolean {
  return Atomics.compareExchange(request.claims, request.claim, 0, 1) === 0
}

/** Every field verifyRecord reads; the rest of a record (extras, the store's own) does not reach a worker. */
export const VERIFIED_FIELDS = [
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
  return cut(record, omitKey, false).input
}

/** {@link verificationInput}, and with `signatureApart` a string `signature` returned beside it instead of in it. */
function cut(record: Readonly<Record<string, unknown>>, omitKey: boolean, signatureApart: boolean): { input: Readonly<Record<string, unknown>>; signature: string | null } {
  if (typeof record['toJSON'] === 'function' || Array.isArray(record)) return { input: record, signature: null }
  const input: Record<string, unknown> = {}
  let signature: string | null = null
  for (const field of VERIFIED_FIELDS) {
    if (omitKey && field === 'providerPublicKey') continue
    if (!(hasOwn.call(record, field) && isEnumerable.call(record, field))) continue
    const value = record[field]
    if (signatureApart && field === 'signature' && typeof value === 'string') signature = value
    else input[field] = value
  }
  return { input, signature }
}

/** One request's records, added one at a time: the JSON of each, and its signature beside it. */
export class RequestBuilder {
  readonly #json: string[] = []
  readonly #signatures: (string | null)[] = []

  /** Records added. */
  get size(): number {
    return this.#json.length
  }

  /**
   * Adds the {@link verificationInput} of `record`; false, adding nothing, when JSON cannot carry it (a BigInt, a
   * cycle). `omitKey` as for verificationInput.
   */
  add(record: Readonly<Record<string, unknown>>, omitKey = false): boolean {
    const { input, signature } = cut(record, omitKey, true)
    let json: string | undefined
    try {
      json = JSON.stringify(input) as string | undefined
    } catch {
      return false
    }
    if (json === undefined) return false
    this.#json.push(json)
    this.#signatures.push(signature)
    return true
  }

  /** The request's `text` and `signatures`. */
  finish(): JsonChunk {
    return { text: `[${this.#json.join(',')}]`, signatures: this.#signatures }
  }
}

/**
 * The records of a request (anything that is not an object becomes `{}`: verified as unsigned), each with its
 * signature put back.
 */
export function decodeRecords({ text, signatures }: JsonChunk): Record<string, unknown>[] {
  const values = JSON.parse(text) as unknown[]
  return values.map((value, index) => {
    const record = value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {}
    const signature = signatures[index]
    if (typeof signature === 'string') record['signature'] = signature
    return record
  })
}

/** Verdicts in reply form: the JSON of the distinct ones, and each record's index among them. */
export function encodeVerdicts(verdicts: readonly RecordVerdict[]): { shapes: string; indices: Uint32Array } {
  const indices = new Uint32Array(verdicts.length)
  const known = new Map<string, number>()
  const shapes: string[] = []
  verdicts.forEach((verdict, position) => {
    const key = verdictKey(verdict)
    let index = known.get(key)
    if (index === undefined) {
      index = shapes.length
      known.set(key, index)
      shapes.push(JSON.stringify(verdict))
    }
    indices[position] = index
  })
  return { shapes: `[${shapes.join(',')}]`, indices }
}

/**
 * What tells verdicts apart, for {@link encodeVerdicts}: for verdicts without reasons (every valid one, nearly all
 * of a chunk) a concatenation of each check's kind, result and signer (`covers` follows from the kind, as
 * verifyRecord sets it), several times cheaper than the JSON of the verdict; for the rest, the JSON. The prefixes
 * keep the two forms apart, and a signer holds no NUL, so no two verdicts share a key.
 */
function verdictKey(verdict: RecordVerdict): string {
  let key = `k${verdict.overall}`
  for (const check of verdict.checks) {
    if (check.reason !== undefined || check.signer?.includes('\u0000') === true) return `j${JSON.stringify(verdict)}`
    key += `\u0000${check.kind}\u0000${check.result}${check.signer === undefined ? '\u0001' : `\u0002${check.signer}`}`
  }
  return key
}

/** The verdicts of a reply, in order; records with equal verdicts share one object. */
export function decodeVerdicts(shapes: string, indices: Uint32Array): RecordVerdict[] {
  const distinct = JSON.parse(shapes) as RecordVerdict[]
  const verdicts = new Array<RecordVerdict>(indices.length)
  for (let i = 0; i < indices.length; i++) verdicts[i] = distinct[indices[i] as number] as RecordVerdict
  return verdicts
}
