/**
 * Signature verification at ingest: the verdicts of a batch's records,
 * computed off the event loop (the trust layer's worker threads) before the
 * batch is queued, so verifying one batch overlaps with writing the one
 * before it. Under `reject` a batch with a record whose verdict is not
 * `valid` is refused whole, naming the first such record.
 */
import { PriceStoreError } from '../../errors.js'
import type { StoredRecord } from '../../records/stored-record.js'
import { SignatureVerifier } from '../../trust/signature-verifier.js'
import { VERIFIED_FIELDS } from '../../trust/worker-protocol.js'
import { SIGNATURE_FIELD, type OverallVerdict, type RecordVerdict } from '../../trust/verdict.js'
import type { Provider } from '../../types.js'
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
   * The verdicts of `records` (in order), or `undefined` when the policy is `off`.
   * @param count whether the verdicts count in {@link IngestVerifier.counts} (not for a check before a write elsewhere)
   * @throws PriceStoreError `PRICE_INVALID_SIGNATURE` under `reject` (details: `index`, `field`)
   */
  async check(records: readonly StoredRecord[], count = true): Promise<readonly RecordVerdict[] | undefined> {
    if (this.#options.policy === 'off') return undefined
    const verdicts = await this.verify(records.map((record) => signedRecord(record, this.#provider)))
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
    if (this.#closed) throw closedError()
    this.#verifier ??= new SignatureVerifier({
      signers: { providers: [{ id: this.#provider.id, publicKey: this.#provider.publicKey, evmAddresses: this.#options.evmSigners }] },
      evmChainId: this.#options.evmChainId,
      ...(this.#options.threads === undefined ? {} : { threads: this.#options.threads }),
    })
    try {
      return await this.#verifier.verifyMany(records)
    } catch (err) {
      throw this.#closed ? closedError() : err
    }
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

/**
 * A stored record as it was signed, as far as verification reads it ({@link VERIFIED_FIELDS}): its own fields and
 * extra fields among them, and the provider's id. No `providerPublicKey`: the verifier checks the Arweave signature
 * against the provider's configured key, the one a query would join. Picked field by field: spreading the record
 * and its extra fields cost about 10 µs a record that carries a `liteEvmSignature`.
 */
export function signedRecord(record: StoredRecord, provider: Provider): Record<string, unknown> {
  const signed: Record<string, unknown> = {}
  const { extras } = record
  for (const field of VERIFIED_FIELDS) {
    if (field === 'provider') signed[field] = provider.id
    else if (field === 'providerPublicKey') continue
    else if (Object.hasOwn(record, field)) signed[field] = record[field as keyof StoredRecord]
    else if (extras !== null && Object.hasOwn(extras, field)) signed[field] = extras[field]
  }
  return signed
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

