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
import type { ResolvedSignatureOptions, SignaturePolicy } from './signature-options.js'

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
  readonly #provider: Provider
  #verifier: SignatureVerifier | undefined
  readonly #verdicts: Record<OverallVerdict, number> = { valid: 0, unsigned: 0, invalid: 0, malformed: 0, 'signer-not-allowed': 0 }
  #rejectedBatches = 0
  /** Between `close()` and the store's next open. */
  #closed = false

  constructor(options: ResolvedSignatureOptions, provider: Provider) {
    this.#options = options
    this.#provider = provider
  }

  get policy(): SignaturePolicy {
    return this.#options.policy
  }

  /** What was verified since the store opened. */
  counts(): IngestCounts {
    return { verdicts: { ...this.#verdicts }, rejectedBatches: this.#rejectedBatches }
  }

  /**
   * The verdicts of `records` (in order), or `undefined` when the policy is `off`. The workers read the records as
   * `framed` encodes them, a chunk at a time; when this returns its promise, `framed` holds every chunk.
   * @param count whether the verdicts count in {@link IngestVerifier.counts} (not for a check before a write elsewhere)
   * @throws PriceStoreError `PRICE_INVALID_SIGNATURE` under `reject` (details: `index`, `field`)
   */
  async check(records: readonly StoredRecord[], framed: FramedRecords, count = true): Promise<readonly RecordVerdict[] | undefined> {
    if (this.#options.policy === 'off') return undefined
    const verdicts = await this.#run((verifier) => verifier.verifyEncoded(records.length, (_, to) => framed.share(to)))
    if (count) for (const verdict of verdicts) this.#verdicts[verdict.overall]++
    if (this.#options.policy === 'reject') {
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

  /** The store's verifier: its own workers (ingest-worker.ts), which also read a batch's chunks as the store encodes them. */
  #newVerifier(): SignatureVerifier {
    const { id, publicKey } = this.#provider
    const context: IngestChunkContext = { provider: { id, publicKey } }
    return new SignatureVerifier({
      signers: { providers: [{ id, publicKey, evmAddresses: this.#options.evmSigners }] },
      evmChainId: this.#options.evmChainId,
      ...(this.#options.threads === undefined ? {} : { threads: this.#options.threads }),
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
    await verifier?.close()
  }
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

