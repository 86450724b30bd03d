/**
 * The signature flags of the commands that write or verify (`serve`,
 * `import`, `verify`): the store's `signatures` option from the command
 * line, over the `signatures` object of `--config`.
 */
import type { SignatureOptions, SignaturePolicy } from '../store/signatures/signature-options.js'
import { UsageError } from './args.js'
import type { StoreConfig } from './config.js'

/** The `parseArgs` options of signature verification. */
export const SIGNATURE_OPTIONS = {
  signatures: { type: 'string' },
  'evm-signer': { type: 'string', multiple: true },
} as const

/** The help text of {@link SIGNATURE_OPTIONS}. */
export const SIGNATURE_OPTIONS_HELP = `Signature options (docs/semantics.md, "Signature verdicts"):
  --signatures off|flag|reject
                              verify the signatures of the records written: off (the default), flag (keep
                              a verdict with each record, take it anyway) or reject (refuse a batch with a
                              record whose signature is not valid; nothing of it is written)
  --evm-signer ADDRESS        an EVM address allowed to sign liteEvmSignature and evmSignature for the
                              provider (repeatable); the Arweave signature is checked against the
                              provider's public key`

const POLICIES: readonly SignaturePolicy[] = ['off', 'flag', 'reject']

/**
 * `config` with the signature flags applied over its `signatures` (from `--config`).
 * @throws UsageError for a policy that is not off, flag or reject
 */
export function withSignatureFlags(config: StoreConfig, values: { readonly signatures?: string | undefined; readonly 'evm-signer'?: string[] | undefined }): StoreConfig {
  const policy = values.signatures
  if (policy !== undefined && !POLICIES.includes(policy as SignaturePolicy)) {
    throw new UsageError(`--signatures must be off, flag or reject (got ${JSON.stringify(policy)})`)
  }
  const evmSigners = values['evm-signer']
  if (policy === undefined && evmSigners === undefined) return config
  const signatures: SignatureOptions = {
    ...config.signatures,
    ...(policy === undefined ? {} : { policy: policy as SignaturePolicy }),
    ...(evmSigners === undefined ? {} : { evmSigners }),
  }
  return { ...config, signatures }
}
