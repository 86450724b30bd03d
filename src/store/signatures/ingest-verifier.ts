/**
 * Signature verification at ingest: the verdicts of a batch's records,
 * computed off the event loop (the trust layer's worker threads) before the
 * batch is queued, so verifying one batch overlaps with writing the one
 * before it. Under `reject` a batch with a record whose verdict is not
 * `valid` is refused whole, naming the first such record.
 */
import { PriceStoreError } from '../../errors.js'
import type { FramedRecords } from '../../keys/framed-records.js'
import type { StoredRecord } from '../../records/stored-record.js'
import { SignatureVerifier } from '../../trust/signature-verifier.js'
import { SIGNATURE_FIELD, type OverallVerdict, type RecordVerdict } from '../../trust/verdict.js'
import type { Provider } from '../../types.js'
import { INGEST_WORKER, type IngestChunkContext } from './ingest-chunk.js'
import { signatureRuleText, type ResolvedSignatureOptions, type SignaturePolicy } from './signature-options.js'

/** Verdicts taken at ingest since the store opened, by overall verdict, and batches refused. */
export interface IngestCounts {
  readonly verdicts: Readonly<Record<OverallVerdict, number>>
  readonly rejectedBatches: number
}

/** {@link IngestCounts} with the policy they were taken under (`PriceStore.signatures`, `/stats`). */
export interface SignatureCounts extends IngestCounts {
  readonly policy: SignaturePolicy
}

/** Verifies the batches a store takes, per its `signatures` option. */
export class IngestVerifier {
  readonly #options: ResolvedSignatureOptions
  readonly #ownRule: string
  readonly #provider: Provider
  #verifier: SignatureVerifier | undefined
  /** Verifiers for batches given other options (`putBatch`'s `signatures` option), by rule, the most recent last. */
  readonly #others = new Map<string, SharedVerifier>()
  readonly #verdicts: Record<OverallVerdict, number> = { valid: 0, unsigned: 0, invalid: 0, malformed: 0, 'signer-not-allowed': 0 }
  #rejectedBatches = 0
  /** Between `close()` and the store's next open. */
  #closed = false

  constructor(options: ResolvedSignatureOptions, provider: Provider) {
    this.#options = options
    this.#ownRule = signatureRuleText(options)
    this.#provider = provider
  }

  get policy(): SignaturePolicy {
    return this.#options.policy
  }

  /** The store's own options, as {@link signatureRuleText} writes them. */
  get ruleText(): string {
    return this.#ownRule
  }

  /** What was verified since the store opened. */
  counts(): IngestCounts {
    return { verdicts: { ...this.#verdicts }, rejectedBatches: this.#rejectedBatches }
  }

  /**
   * The verdicts of `records` (in order), or `undefined` when the policy is `off`. The workers read the records as
   * `framed` encodes them, a chunk at a time; when this returns its promise, `framed` holds every chunk.
   * @param count whether the verdicts count in {@link IngestVerifier.counts} (not for a check before a write elsewhere)
   * @param rule the options to verify under, when not the store's own (a commit of a replication log)
   * @throws PriceStoreError `PRICE_INVALID_SIGNATURE` under `reject` (details: `index`, `field`)
   */
  async check(records: readonly StoredRecord[], framed: FramedRecords, count = true, rule: ResolvedSignatureOptions = this.#options): Promise<readonly RecordVerdict[] | undefined> {
    if (rule.policy === 'off') return undefined
    const task = (verifier: SignatureVerifier): Promise<RecordVerdict[]> => verifier.verifyEncoded(records.length, (_, to) => framed.share(to))
    // The store's own options need no text: only options given for a batch are compared (and may be the same).
    const text = rule === this.#options ? this.#ownRule : signatureRuleText(rule)
    const verdicts = text === this.#ownRule ? await this.#run(task) : await this.#runOther(rule, text, task)
    if (count) for (const verdict of verdicts) this.#verdicts[verdict.overall]++
    if (rule.policy === 'reject') {
      const index = verdicts.findIndex((verdict) => verdict.overall !== 'valid')
      if (index >= 0) {
        if (count) this.#rejectedBatches++
        throw refused(records[index] as StoredRecord, verdicts[index] as RecordVerdict, index)
      }
    }
    return verdicts
  }

  /**
   * The verdicts of `records` (records as the store returns them), whatever the policy.
   * @throws PriceStoreError `PRICE_NOT_OPEN` when the store closed meanwhile (its workers are stopped)
   */
  async verify(records: readonly Readonly<Record<string, unknown>>[]): Promise<RecordVerdict[]> {
    return this.#run((verifier) => verifier.verifyMany(records))
  }

  /** Runs `task` on the verifier, started on first use; a task cut short by `close()` is PRICE_NOT_OPEN. */
  async #run(task: (verifier: SignatureVerifier) => Promise<RecordVerdict[]>): Promise<RecordVerdict[]> {
    if (this.#closed) throw closedError()
    this.#verifier ??= this.#newVerifier()
    try {
      return await task(this.#verifier)
    } catch (err) {
      throw this.#closed ? closedError() : err
    }
  }

  /**
   * Runs `task` on a verifier of `rule`, started on first use. At most {@link OTHER_RULES} are kept: the one used
   * least recently is stopped once its tasks are done (a log's commits change options rarely, when signers rotate).
   */
  async #runOther(rule: ResolvedSignatureOptions, text: string, task: (verifier: SignatureVerifier) => Promise<RecordVerdict[]>): Promise<RecordVerdict[]> {
    if (this.#closed) throw closedError()
    let shared = this.#others.get(text)
    if (shared === undefined) {
      shared = { verifier: this.#newVerifier({ ...rule, threads: 1 }), tasks: 0, retired: false }
      for (const [key, old] of this.#others) {
        if (this.#others.size < OTHER_RULES) break
        this.#others.delete(key)
        retire(old)
      }
    }
    this.#others.delete(text)
    this.#others.set(text, shared)
    shared.tasks++
    try {
      return await task(shared.verifier)
    } catch (err) {
      throw this.#closed ? closedError() : err
    } finally {
      shared.tasks--
      if (shared.retired && shared.tasks === 0) void shared.verifier.close().catch(() => {}) // a worker that fails to stop is gone either way
    }
  }

  /** A verifier on its own workers (ingest-worker.ts), which also read a batch's chunks as the store encodes them. */
  #newVerifier(options: ResolvedSignatureOptions = this.#options): SignatureVerifier {
    const { id, publicKey } = this.#provider
    const context: IngestChunkContext = { provider: { id, publicKey } }
    return new SignatureVerifier({
      signers: { providers: [{ id, publicKey, evmAddresses: options.evmSigners }] },
      evmChainId: options.evmChainId,
      ...(options.threads === undefined ? {} : { threads: options.threads }),
    }, { entry: INGEST_WORKER, context })
  }

  /** The store opened (again): counts start from 0, and verifying may start workers. */
  opened(): void {
    this.#closed = false
    this.#rejectedBatches = 0
    for (const verdict of Object.keys(this.#verdicts) as OverallVerdict[]) this.#verdicts[verdict] = 0
  }

  /** Stops the worker threads, if any were started; the store opening again starts new ones. */
  async close(): Promise<void> {
    this.#closed = true
    const verifier = this.#verifier
    this.#verifier = undefined
    const others = [...this.#others.values()]
    this.#others.clear()
    await Promise.all([verifier?.close(), ...others.map(async (other) => other.verifier.close())])
  }
}

/** How many verifiers of other options a store keeps at once. */
const OTHER_RULES = 2

/** A verifier of other options, and the tasks running on it. */
interface SharedVerifier {
  readonly verifier: SignatureVerifier
  tasks: number
  /** Replaced by a verifier of newer options: stopped when its last task ends. */
  retired: boolean
}

function retire(shared: SharedVerifier): void {
  shared.retired = true
  if (shared.tasks === 0) void shared.verifier.close().catch(() => {}) // a worker that fails to stop is gone either way
}

function closedError(): PriceStoreError {
  return new PriceStoreError('PRICE_NOT_OPEN', 'the store closed while signatures were being verified')
}

function refused(record: StoredRecord, verdict: RecordVerdict, index: number): PriceStoreError {
  const failing = verdict.checks.find((check) => check.result !== 'valid')
  const field = failing === undefined ? 'signature' : SIGNATURE_FIELD[failing.kind]
  const why = failing === undefined ? 'it carries no signature' : `its ${field} is ${failing.result}${failing.reason === undefined ? '' : ` (${failing.reason})`}`
  return new PriceStoreError('PRICE_INVALID_SIGNATURE',
    `record ${index}: ${why} (id ${JSON.stringify(record.id)}, ${record.symbol} at ${record.timestamp})`,
    { details: { index, field } })
}

