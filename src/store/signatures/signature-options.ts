/**
 * The `signatures` option of a store: whether and how the records it takes
 * are verified (docs/semantics.md, "Signature verdicts").
 */
import { PriceStoreError, describeValue } from '../../errors.js'

/** What a store does with a batch's signatures: nothing, verify and keep the verdicts, or verify and refuse a batch with one that fails. */
export type SignaturePolicy = 'off' | 'flag' | 'reject'

/** How a store verifies the signatures of the records it takes. */
export interface SignatureOptions {
  /**
   * `off` (the default): nothing is verified. `flag`: every record's signatures are verified before it is
   * written and the verdict is kept with it (`store.verify` reports them); the record is taken whatever the
   * verdict. `reject`: the same, and a batch holding a record whose verdict is not `valid` is refused whole
   * (`PRICE_INVALID_SIGNATURE`, naming the record): nothing of it is written.
   */
  readonly policy?: SignaturePolicy
  /**
   * EVM addresses allowed to sign `liteEvmSignature` and `evmSignature` for the store's provider. The Arweave
   * signature is accepted from the provider's own key (`provider.publicKey`) only.
   */
  readonly evmSigners?: readonly string[]
  /** Worker threads that verify (default: one per core). */
  readonly threads?: number
  /** The EIP-712 chainId of `evmSignature` (default 1). */
  readonly evmChainId?: number
}

/** Validated signature options. */
export interface ResolvedSignatureOptions {
  readonly policy: SignaturePolicy
  readonly evmSigners: readonly string[]
  readonly threads: number | undefined
  readonly evmChainId: number
}

const POLICIES: readonly SignaturePolicy[] = ['off', 'flag', 'reject']
const EVM_ADDRESS = /^0x[0-9a-fA-F]{40}$/

/**
 * Checks the `signatures` option and applies defaults.
 * @throws PriceStoreError `PRICE_INVALID_OPTIONS` (details.field `signatures…`)
 */
export function resolveSignatureOptions(options: unknown): ResolvedSignatureOptions {
  if (options === undefined) return Object.freeze({ policy: 'off', evmSigners: Object.freeze([]), threads: undefined, evmChainId: 1 })
  if (typeof options !== 'object' || options === null) throw invalid('signatures', options, 'must be an object { policy, evmSigners }')
  const { policy = 'off', evmSigners = [], threads, evmChainId = 1 } = options as SignatureOptions
  if (!POLICIES.includes(policy)) throw invalid('signatures.policy', policy, `must be one of ${POLICIES.join(', ')}`)
  if (!Array.isArray(evmSigners) || !evmSigners.every((address) => typeof address === 'string' && EVM_ADDRESS.test(address))) {
    throw invalid('signatures.evmSigners', evmSigners, 'must be an array of EVM addresses (0x and 40 hex digits)')
  }
  if (threads !== undefined && (!Number.isSafeInteger(threads) || threads < 1 || threads > 256)) throw invalid('signatures.threads', threads, 'must be an integer from 1 to 256')
  if (!Number.isSafeInteger(evmChainId) || evmChainId < 0) throw invalid('signatures.evmChainId', evmChainId, 'must be an integer >= 0')
  return Object.freeze({ policy, evmSigners: Object.freeze(evmSigners.map((address) => address.toLowerCase())), threads, evmChainId })
}

function invalid(field: string, value: unknown, rule: string): PriceStoreError {
  return new PriceStoreError('PRICE_INVALID_OPTIONS', `option ${field} ${rule} (got ${describeValue(value)})`, { details: { field } })
}

/**
 * The options that decide a record's verdict (threads only decide how fast), in one canonical text: the same for
 * any two option sets that give every record the same verdict. A replication log carries it with each commit so
 * that every node verifies the commit as its writer did.
 */
export function signatureRuleText({ policy, evmSigners, evmChainId }: ResolvedSignatureOptions): string {
  return JSON.stringify({ policy, evmSigners: [...new Set(evmSigners)].sort(), evmChainId })
}

/**
 * Reads a {@link signatureRuleText} back.
 * @throws PriceStoreError `PRICE_INVALID_OPTIONS` when it is not one
 */
export function parseSignatureRule(text: string): SignatureOptions {
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    throw invalid('signatures', text, 'must be the JSON of { policy, evmSigners, evmChainId }')
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw invalid('signatures', text, 'must be the JSON of { policy, evmSigners, evmChainId }')
  const { policy, evmSigners, evmChainId } = resolveSignatureOptions({ ...parsed, threads: undefined })
  return { policy, evmSigners, evmChainId }
}
