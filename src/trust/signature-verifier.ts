/**
 * SignatureVerifier: verifyRecord for batches, off the event loop. One
 * worker thread per core (os.availableParallelism()), started on first use;
 * a batch is cut into chunks per worker, sent and answered in the compact
 * forms of worker-protocol.ts (the records' JSON text, cut to what
 * verification reads; the distinct verdicts and an index per record). A record goes to the worker chosen by a hash of its signature, so
 * each distinct signature meets one worker's cache only and is verified
 * once while it stays there. Idle workers do not keep the process alive
 * (they are unref'ed while nothing is pending), but `close()` is still what
 * ends them: call it when done.
 */
import { availableParallelism } from 'node:os'
import { Worker } from 'node:worker_threads'
import { signerTable, type AllowedSigners, type SignerTable } from './allowed-signers.js'
import { defaultBackend, type Secp256k1Backend } from './secp256k1-recover.js'
import type { RecordVerdict } from './verdict.js'
import { verifyRecord } from './verify-record.js'
import { decodeVerdicts, encodeRecord, encodeRecords, type VerifyReply, type VerifyRequest, type WorkerSetup } from './worker-protocol.js'
import { workerScriptUrl } from './worker-script.js'

/** How a SignatureVerifier verifies. */
export interface SignatureVerifierOptions {
  /** Who may sign, per provider. */
  readonly signers: AllowedSigners
  /** Worker threads (default os.availableParallelism()). */
  readonly threads?: number
  /** Outcomes each worker keeps (default 100,000; 0 keeps none). */
  readonly cacheSize?: number
  /** The EIP-712 chainId of `evmSignature` (default 1). */
  readonly evmChainId?: number
  /** The secp256k1 backend (default: native when its prebuilt binding loads here, else noble). */
  readonly secp256k1?: Secp256k1Backend
}

/** What a verifier has done so far. */
export interface SignatureVerifierStats {
  readonly threads: number
  readonly secp256k1: Secp256k1Backend
  /** Records verified. */
  readonly records: number
  /** Signatures whose outcome came from a worker's cache, and those computed. */
  readonly cacheHits: number
  readonly cacheMisses: number
}

interface Pending {
  readonly resolve: (verdicts: RecordVerdict[]) => void
  readonly reject: (error: Error) => void
}

interface Slot {
  readonly worker: Worker
  readonly pending: Map<number, Pending>
  /** Why it can take no more parts (it died, or the verifier closed), once it cannot. */
  lost?: Error
}

const DEFAULT_CACHE_SIZE = 100_000
/**
 * Records per message. The first message of each worker is small, so it starts verifying a few milliseconds into
 * the batch instead of waiting for a thousand records to be encoded (on two cores that wait left a core idle at the
 * start of every batch); later ones are larger, as each message has a fixed cost.
 */
const FIRST_PART_RECORDS = 128
const PART_RECORDS = 1_000

/** Verifies batches of records in worker threads; see the file comment. */
export class SignatureVerifier {
  readonly #setup: WorkerSetup
  /** The signers, for leaving out of what is sent a provider key the workers hold already. */
  readonly #table: SignerTable
  readonly #threads: number
  #slots: (Slot | undefined)[]
  #nextId = 1
  #closed = false
  #records = 0
  #cacheHits = 0
  #cacheMisses = 0

  constructor(options: SignatureVerifierOptions) {
    const threads = options.threads ?? availableParallelism()
    if (!Number.isInteger(threads) || threads < 1) throw new RangeError(`threads must be a positive integer, not ${threads}`)
    this.#threads = threads
    this.#slots = Array.from({ length: threads }, () => undefined)
    // Plain data only: workerData is cloned into each worker.
    this.#setup = {
      signers: { providers: options.signers.providers.map((entry) => ({ ...entry, ...(entry.evmAddresses === undefined ? {} : { evmAddresses: [...entry.evmAddresses] }) })) },
      evmChainId: options.evmChainId ?? 1,
      secp256k1: options.secp256k1 ?? defaultBackend(),
      cacheSize: options.cacheSize ?? DEFAULT_CACHE_SIZE,
    }
    this.#table = signerTable(this.#setup.signers)
  }

  /**
   * The verdict of each record, in the order given (records with equal verdicts may share one object: treat them
   * as read-only). Rejects only when the verifier is closed or a worker died.
   */
  async verifyMany(records: readonly Readonly<Record<string, unknown>>[]): Promise<RecordVerdict[]> {
    if (this.#closed) throw new Error('the SignatureVerifier is closed')
    if (records.length === 0) return []
    // Every worker first, so a part is posted the moment it is encoded and the workers verify
    // while this thread encodes the rest (on few cores that overlap is most of the difference).
    // Once the workers run, the parts are encoded and posted before this call returns, so a caller may go on with
    // other work (a store encodes the batch's write) while they verify.
    const ready = this.#slots.every((slot) => slot !== undefined) ? (this.#slots as Slot[]) : undefined
    const slots = ready ?? (await Promise.all(Array.from({ length: this.#threads }, (_, index) => this.#slotAt(index))))
    const verdicts: RecordVerdict[] = new Array<RecordVerdict>(records.length)
    const parts = slots.map(() => ({ json: [] as string[], positions: [] as number[], limit: FIRST_PART_RECORDS }))
    const answers: Promise<void>[] = []
    const flush = (index: number): void => {
      const part = parts[index] as { json: string[]; positions: number[]; limit: number }
      if (part.positions.length === 0) return
      const { positions } = part
      const answer = this.#post(slots[index] as Slot, encodeRecords(part.json))
      answers.push(answer.then((list) => positions.forEach((position, i) => (verdicts[position] = list[i] as RecordVerdict))))
      parts[index] = { json: [], positions: [], limit: PART_RECORDS }
    }
    records.forEach((record, position) => {
      const json = encodeRecord(record, this.#holdsKeyOf(record))
      // A record JSON cannot carry (a BigInt, a cycle) is verified here; it is no RedStone record anyway.
      if (json === undefined) {
        verdicts[position] = verifyRecord(record, this.#setup.signers, this.#setup)
        return
      }
      const index = shardOf(record, position, this.#threads)
      const part = parts[index] as { json: string[]; positions: number[]; limit: number }
      part.json.push(json)
      part.positions.push(position)
      if (part.positions.length >= part.limit) flush(index)
    })
    parts.forEach((_, index) => flush(index))
    await Promise.all(answers)
    this.#records += records.length
    return verdicts
  }

  /**
   * Whether the workers hold the record's `providerPublicKey` already (it is the key configured for its provider,
   * which the worker checks against anyway), so it need not be sent: a query's records carry it, the largest field.
   */
  #holdsKeyOf(record: Readonly<Record<string, unknown>>): boolean {
    const { providerPublicKey, provider } = record
    return typeof providerPublicKey === 'string' && typeof provider === 'string' && this.#table.arweaveKeyOf(provider) === providerPublicKey
  }

  /** Counts so far (see SignatureVerifierStats). */
  stats(): SignatureVerifierStats {
    return { threads: this.#threads, secp256k1: this.#setup.secp256k1, records: this.#records, cacheHits: this.#cacheHits, cacheMisses: this.#cacheMisses }
  }

  /** Ends every worker (pending batches reject) and waits until they have exited. Idempotent. */
  async close(): Promise<void> {
    this.#closed = true
    const slots = this.#slots.filter((slot): slot is Slot => slot !== undefined)
    this.#slots = this.#slots.map(() => undefined)
    for (const slot of slots) this.#fail(slot, new Error('the SignatureVerifier was closed'))
    await Promise.all(slots.map((slot) => slot.worker.terminate()))
  }

  #post(slot: Slot, text: string): Promise<RecordVerdict[]> {
    if (slot.lost !== undefined) return Promise.reject(slot.lost)
    const id = this.#nextId++
    return new Promise<RecordVerdict[]>((resolve, reject) => {
      if (slot.pending.size === 0) slot.worker.ref()
      slot.pending.set(id, { resolve, reject })
      const request: VerifyRequest = { id, text }
      slot.worker.postMessage(request)
    })
  }

  async #slotAt(index: number): Promise<Slot> {
    const existing = this.#slots[index]
    if (existing !== undefined) return existing
    const url = await workerScriptUrl()
    if (this.#closed) throw new Error('the SignatureVerifier is closed')
    // Another call may have started this slot while the URL was awaited.
    const raced = this.#slots[index]
    if (raced !== undefined) return raced
    const slot: Slot = { worker: new Worker(url, { workerData: this.#setup }), pending: new Map() }
    slot.worker.unref()
    slot.worker.on('message', (reply: VerifyReply) => this.#answer(slot, reply))
    slot.worker.on('error', (error) => this.#lose(index, slot, error))
    slot.worker.on('exit', (code) => this.#lose(index, slot, new Error(`a SignatureVerifier worker exited with code ${code}`)))
    this.#slots[index] = slot
    return slot
  }

  #answer(slot: Slot, reply: VerifyReply): void {
    const pending = slot.pending.get(reply.id)
    if (pending === undefined) return
    slot.pending.delete(reply.id)
    if (slot.pending.size === 0) slot.worker.unref()
    if ('error' in reply) {
      pending.reject(new Error(`a SignatureVerifier worker failed: ${reply.error}`))
      return
    }
    this.#cacheHits += reply.cacheHits
    this.#cacheMisses += reply.cacheMisses
    pending.resolve(decodeVerdicts(reply.shapes, reply.indices))
  }

  /** A worker that died: its batches reject, and the next batch starts a new one in its place. */
  #lose(index: number, slot: Slot, error: Error): void {
    if (this.#slots[index] === slot) this.#slots[index] = undefined
    this.#fail(slot, error)
  }

  #fail(slot: Slot, error: Error): void {
    slot.lost ??= error
    for (const pending of slot.pending.values()) pending.reject(error)
    slot.pending.clear()
  }
}

/** The worker of a record: by a hash of its first signature, so a signature always meets the same cache; unsigned ones spread by position. */
export function shardOf(record: Readonly<Record<string, unknown>>, position: number, threads: number): number {
  const signature = [record['signature'], record['liteEvmSignature'], record['evmSignature']].find((field) => typeof field === 'string' && field !== '')
  if (typeof signature !== 'string') return position % threads
  // FNV-1a over the last characters (the whole string costs more and adds nothing: signatures are random).
  let hash = 0x811c9dc5
  for (let i = Math.max(0, signature.length - 32); i < signature.length; i++) hash = Math.imul(hash ^ signature.charCodeAt(i), 0x01000193)
  return (hash >>> 0) % threads
}
