/**
 * SignatureVerifier: verifyRecord for batches, off the event loop. One
 * worker thread per core (os.availableParallelism()), started on first use.
 * A batch is cut into chunks in the compact forms of worker-protocol.ts (the
 * records' JSON text, cut to what verification reads, or the caller's own
 * encoding for its own worker entry; back, the distinct verdicts and an
 * index per record). Every chunk is sent to every worker and
 * the first worker to reach it claims it (a shared slot per chunk), so the
 * work balances itself: a worker sharing its core with the calling thread,
 * or slowed by anything else, simply takes fewer chunks, and no core waits
 * at the end of a batch for a slower one. What a worker's verifications add
 * to its cache is passed on to the others before the batch's answer, so a
 * signature met again is a cache hit whichever worker meets it. Idle workers
 * do not keep the process alive (they are unref'ed while nothing is
 * pending), but `close()` is still what ends them: call it when done.
 */
import { availableParallelism } from 'node:os'
import { Worker } from 'node:worker_threads'
import { signerTable, type AllowedSigners, type SignerTable } from './allowed-signers.js'
import { defaultBackend, type Secp256k1Backend } from './secp256k1-recover.js'
import type { RecordVerdict } from './verdict.js'
import { verifyRecord } from './verify-record.js'
import {
  RequestBuilder, decodeVerdicts, type EncodedChunk, type JsonChunk, type RememberRequest, type VerifyReply, type VerifyRequest, type WorkerSetup,
} from './worker-protocol.js'
import { VERIFY_WORKER, workerScriptUrl, type WorkerEntry } from './worker-script.js'

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

/** One batch on its way through the workers: its chunks are sent, then its verdicts awaited. */
interface BatchRun {
  /** Each record's verdict, by position in the batch, as the answers come. */
  readonly verdicts: RecordVerdict[]
  /** Chunks sent so far. */
  readonly sent: number
  /** Sends a chunk holding the records at `positions`. */
  send(chunk: JsonChunk | EncodedChunk, positions: readonly number[]): void
  /** The verdicts, once every chunk is answered. */
  finish(): Promise<RecordVerdict[]>
}

/** A worker thread of the caller's own (price-store's store uses one that decodes its encoded batches). */
export interface OwnWorker {
  readonly entry: WorkerEntry
  /** Given to the worker as its setup's `context`. */
  readonly context: unknown
}

interface Slot {
  readonly worker: Worker
  /** Why it can take no more chunks (it died, or the verifier closed), once it cannot. */
  lost?: Error
}

const DEFAULT_CACHE_SIZE = 100_000
/**
 * Records per chunk. The first chunks are small, so every worker starts verifying a millisecond or two into the
 * batch instead of waiting for the calling thread to encode a large one; later ones are larger, as each chunk
 * costs a message to every worker, but small enough that the last one to finish (30–60 ms of one core) leaves
 * little of a batch to one core.
 */
const FIRST_CHUNK_RECORDS = 64
const CHUNK_RECORDS = 256

/** Records in a batch's chunk `index`: one small chunk per worker first. */
function chunkSize(index: number, threads: number): number {
  return index < threads ? FIRST_CHUNK_RECORDS : CHUNK_RECORDS
}

function closedError(): Error {
  return new Error('the SignatureVerifier is closed')
}

/** Verifies batches of records in worker threads; see the file comment. */
export class SignatureVerifier {
  readonly #setup: WorkerSetup
  /** The signers, for leaving out of what is sent a provider key the workers hold already. */
  readonly #table: SignerTable
  readonly #threads: number
  /** The code the workers run. */
  readonly #entry: WorkerEntry
  #slots: (Slot | undefined)[]
  #nextId = 1
  #closed = false
  /** Chunks sent and not answered yet, by request id (any worker may answer). */
  readonly #pending = new Map<number, Pending>()
  #records = 0
  #cacheHits = 0
  #cacheMisses = 0

  /**
   * @param own a worker thread of the caller's own instead of the verifier's, to which it may send encoded chunks
   *   ({@link SignatureVerifier.verifyEncoded}); price-store's store gives one
   */
  constructor(options: SignatureVerifierOptions, own?: OwnWorker) {
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
      ...(own === undefined ? {} : { context: own.context }),
    }
    this.#entry = own?.entry ?? VERIFY_WORKER
    this.#table = signerTable(this.#setup.signers)
  }

  /**
   * The verdict of each record, in the order given (records with equal verdicts may share one object: treat them
   * as read-only). Rejects only when the verifier is closed or a worker died.
   */
  async verifyMany(records: readonly Readonly<Record<string, unknown>>[]): Promise<RecordVerdict[]> {
    if (this.#closed) throw closedError()
    if (records.length === 0) return []
    // Once the workers run, every chunk is built and posted before this call returns, so a caller may go on with
    // other work while they verify.
    const run = this.#batch(this.#readySlots() ?? (await this.#startSlots()), records.length)
    let chunk = new RequestBuilder()
    let positions: number[] = []
    const send = (): void => {
      if (positions.length === 0) return
      run.send(chunk.finish(), positions)
      chunk = new RequestBuilder()
      positions = []
    }
    records.forEach((record, position) => {
      // A record JSON cannot carry (a BigInt, a cycle) is verified here; it is no RedStone record anyway.
      if (!chunk.add(record, this.#holdsKeyOf(record))) {
        run.verdicts[position] = verifyRecord(record, this.#setup.signers, this.#setup)
        return
      }
      positions.push(position)
      if (positions.length >= chunkSize(run.sent, this.#threads)) send()
    })
    send()
    return run.finish()
  }

  /**
   * The verdicts of `count` records that the caller encodes itself, a chunk at a time: `encode(from, to)` returns
   * records `from` to `to` (exclusive) in shared memory, in the form the caller's own worker decodes (see the
   * constructor). It is called for each chunk in order, all of them before this call returns its promise, so the
   * caller may use what it encoded as soon as it does.
   * @internal price-store's own: a store's batches, encoded once for the workers and for its write
   */
  async verifyEncoded(count: number, encode: (from: number, to: number) => Uint8Array): Promise<RecordVerdict[]> {
    if (this.#closed) throw closedError()
    if (count === 0) return []
    const chunks = function* (threads: number): Generator<[EncodedChunk, number[]]> {
      for (let from = 0, index = 0; from < count; index++) {
        const to = Math.min(count, from + chunkSize(index, threads))
        yield [{ encoded: encode(from, to) }, Array.from({ length: to - from }, (_, i) => from + i)]
        from = to
      }
    }
    const ready = this.#readySlots()
    // Each chunk is posted the moment it is encoded once the workers run; while they start, all are encoded first.
    const encoded = ready === undefined ? [...chunks(this.#threads)] : chunks(this.#threads)
    const run = this.#batch(ready ?? (await this.#startSlots()), count)
    for (const [chunk, positions] of encoded) run.send(chunk, positions)
    return run.finish()
  }

  /** Every worker, when all of them run. */
  #readySlots(): Slot[] | undefined {
    return this.#slots.every((slot) => slot !== undefined) ? (this.#slots as Slot[]) : undefined
  }

  /** Every worker, those not running started. */
  async #startSlots(): Promise<Slot[]> {
    const slots = await Promise.all(Array.from({ length: this.#threads }, (_, index) => this.#slotAt(index)))
    if (this.#closed) throw closedError()
    return slots
  }

  /** A batch of `count` records to send to `slots`, chunk by chunk. */
  #batch(slots: readonly Slot[], count: number): BatchRun {
    const verdicts = new Array<RecordVerdict>(count)
    // One claim slot per chunk: at most one small chunk per worker, then chunks of CHUNK_RECORDS (and a last one).
    const claims = new Int32Array(new SharedArrayBuffer(4 * (this.#threads + 1 + Math.ceil(count / CHUNK_RECORDS))))
    const answers: Promise<void>[] = []
    return {
      verdicts,
      get sent() {
        return answers.length
      },
      send: (chunk, positions) => {
        const answer = this.#post(slots, chunk, claims, answers.length)
        answers.push(answer.then((list) => positions.forEach((position, i) => (verdicts[position] = list[i] as RecordVerdict))))
      },
      finish: async () => {
        await Promise.all(answers)
        this.#records += count
        return verdicts
      },
    }
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

  /** Sends a chunk to every worker, and its verdicts once the worker that claims it answers. */
  #post(slots: readonly Slot[], chunk: JsonChunk | EncodedChunk, claims: Int32Array, claim: number): Promise<RecordVerdict[]> {
    const lost = slots.find((slot) => slot.lost !== undefined)?.lost
    if (lost !== undefined) return Promise.reject(lost)
    const id = this.#nextId++
    return new Promise<RecordVerdict[]>((resolve, reject) => {
      if (this.#pending.size === 0) for (const slot of slots) slot.worker.ref()
      this.#pending.set(id, { resolve, reject })
      const request: VerifyRequest = { id, ...chunk, claims, claim }
      for (const slot of slots) slot.worker.postMessage(request)
    })
  }

  async #slotAt(index: number): Promise<Slot> {
    const existing = this.#slots[index]
    if (existing !== undefined) return existing
    const url = await workerScriptUrl(this.#entry)
    if (this.#closed) throw closedError()
    // Another call may have started this slot while the URL was awaited.
    const raced = this.#slots[index]
    if (raced !== undefined) return raced
    const slot: Slot = { worker: new Worker(url, { workerData: this.#setup }) }
    slot.worker.unref()
    slot.worker.on('message', (reply: VerifyReply) => this.#answer(slot, reply))
    slot.worker.on('error', (error) => this.#lose(index, slot, error))
    slot.worker.on('exit', (code) => this.#lose(index, slot, new Error(`a SignatureVerifier worker exited with code ${code}`)))
    this.#slots[index] = slot
    return slot
  }

  #answer(from: Slot, reply: VerifyReply): void {
    const pending = this.#pending.get(reply.id)
    if (pending === undefined) return
    this.#pending.delete(reply.id)
    if ('error' in reply) {
      pending.reject(new Error(`a SignatureVerifier worker failed: ${reply.error}`))
    } else {
      this.#cacheHits += reply.cacheHits
      this.#cacheMisses += reply.cacheMisses
      // Passed on before the batch's answer: a batch sent after it reaches each worker behind what it learned.
      if (reply.learned !== '') {
        const remember: RememberRequest = { learned: reply.learned }
        for (const slot of this.#slots) if (slot !== undefined && slot !== from && slot.lost === undefined) slot.worker.postMessage(remember)
      }
      pending.resolve(decodeVerdicts(reply.shapes, reply.indices))
    }
    if (this.#pending.size === 0) for (const slot of this.#slots) slot?.worker.unref()
  }

  /**
   * A worker that died: every pending batch rejects (the chunks it had claimed are lost with it, and which those
   * were is not known here), and the next batch starts a new worker in its place.
   */
  #lose(index: number, slot: Slot, error: Error): void {
    if (this.#slots[index] === slot) this.#slots[index] = undefined
    this.#fail(slot, error)
  }

  #fail(slot: Slot, error: Error): void {
    slot.lost ??= error
    const pending = [...this.#pending.values()]
    this.#pending.clear()
    for (const other of [slot, ...this.#slots]) other?.worker.unref()
    for (const { reject } of pending) reject(error)
  }
}
