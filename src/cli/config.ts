import { readFile } from 'node:fs/promises'
import { resolve } from 'node:path'
import type { ProviderNames } from '../engine/parse-query.js'
import type { SignatureOptions } from '../store/signatures/signature-options.js'
import type { Limits, Provider } from '../types.js'
import { CliError } from './args.js'

/** Where commands keep the database unless `--db` says otherwise (git-ignored). */
export const DEFAULT_DB = './data/prices'

/**
 * The provider a store serves unless configured otherwise: RedStone's main
 * provider, with the name, address and public key that RedStone's own client
 * (`redstone-api`, `config/providers.js`) publishes for it. It is only a
 * default: use `--provider-*` or `--config` for your own.
 */
export const DEFAULT_PROVIDER: Provider = Object.freeze({
  name: 'redstone',
  id: 'I-5rWUehEv-MjdK9gFw09RxfSLQX9DIHxG614Wf8qo0',
  publicKey:
    'xyTvKiCST8bAT6sxrgkLh8UCX2N1eKvawODuxwq4qOHIdDAZFU_3N2m59rkZ0E7m77GsJuf1I8u0oEJEbxAdT7uD2JTwoYEHauXSxyJYvF0RCcZOhl5P1PJwImd44SJYa_9My7L84D5KXB9SKs8_VThe7ZyOb5HSGLNvMIK6A8IJ4Hr_tg9GYm65CRmtcu18S9mhun8vgw2wi7Gw6oR6mc4vU1I-hrU66Fi7YlXwFieP6YSy01JqoLPhU84EunPQzXPouVSbXjgRU5kFVxtdRy4GK2fzEBFYsQwCQgFrySCrFKHV8AInu9jerfof_DxNKiXkBzlB8nc22CrYnvvio_BWyh-gN0hQHZT0gwMR-A7sbXNCQJfReaIZzX_jP6XoB82PnpzmL_j1mJ2lnv2Rn001flBAx9AYxtGXd9s07pA-FggTbEG3Y2UnlWW6l3EJ93E0IfxL0PqGEUlp217mxUHvmTw9fkGDWa8rT9RPmsTyji-kMFSefclw80cBm_iOsIEutGP4S3LDbP-ZVJWDeJOBQQpSgwbisl8qbjl2sMQLQihoG2TQyNbmLwfyq-XSULkXjUi1_6BH36wnDBLWBKF-bS2bLKcGtn3Vjet72lNHxJJilcj8vpauwJG0078S_lO5uGt6oicdGR6eh_NSn6_8za_tXg0G_fohz4Yb1z8',
})

/** The `parseArgs` options every command that opens a store accepts. */
export const STORE_OPTIONS = {
  db: { type: 'string' },
  config: { type: 'string' },
  'provider-name': { type: 'string' },
  'provider-id': { type: 'string' },
  'provider-public-key': { type: 'string' },
  'provider-alias': { type: 'string', multiple: true },
  help: { type: 'boolean', short: 'h' },
} as const

/** The help text for {@link STORE_OPTIONS}. */
export const STORE_OPTIONS_HELP = `Store options:
  --db PATH                   database directory (default ${DEFAULT_DB})
  --config FILE               JSON file: {"provider": {"name", "id", "publicKey", "aliases"}, "limits": {...},
                              "retention": {"days": N}, "signatures": {"policy", "evmSigners"}}
                              (retention is applied by serve)
  --provider-name NAME        provider short name (default ${DEFAULT_PROVIDER.name})
  --provider-id ID            provider id, the "provider" field of every record
                              (default ${DEFAULT_PROVIDER.id})
  --provider-public-key KEY   provider public key, joined into every answer
                              (default: RedStone's published key for "redstone")
  --provider-alias NAME       another name the provider parameter accepts for this provider
                              (repeatable; e.g. redstone-rapid, which redstone-api's query builder sends)
  -h, --help                  show this help`

/** How to open the store: resolved from flags, then the config file, then defaults. */
export interface StoreConfig {
  /** Absolute database directory. */
  readonly location: string
  readonly provider: ProviderNames
  readonly limits?: Partial<Limits>
  /** Keep only the last `days` days (the store's `retention` option): from `--config`, or `serve --retention-days`. */
  readonly retention?: { readonly days: number }
  /** The store's `signatures` option: from `--config`, or the signature flags (signature-flags.ts). */
  readonly signatures?: SignatureOptions
}

/** The values {@link STORE_OPTIONS} parse into. */
export interface StoreOptionValues {
  readonly db?: string | undefined
  readonly config?: string | undefined
  readonly 'provider-name'?: string | undefined
  readonly 'provider-id'?: string | undefined
  readonly 'provider-public-key'?: string | undefined
  readonly 'provider-alias'?: string[] | undefined
}

/**
 * Resolves the store configuration. Each provider field comes from its flag,
 * else from `--config`, else from {@link DEFAULT_PROVIDER}.
 *
 * @throws CliError (exit code 2) when the config file is unreadable or malformed.
 */
export async function resolveStoreConfig(values: StoreOptionValues): Promise<StoreConfig> {
  const file = values.config === undefined ? {} : await readConfigFile(values.config)
  const aliases = values['provider-alias'] ?? file.provider?.aliases
  const provider: ProviderNames = {
    name: values['provider-name'] ?? file.provider?.name ?? DEFAULT_PROVIDER.name,
    id: values['provider-id'] ?? file.provider?.id ?? DEFAULT_PROVIDER.id,
    publicKey: values['provider-public-key'] ?? file.provider?.publicKey ?? DEFAULT_PROVIDER.publicKey,
    ...(aliases === undefined ? {} : { aliases }),
  }
  const location = resolve(values.db ?? DEFAULT_DB)
  return {
    location, provider,
    ...(file.limits === undefined ? {} : { limits: file.limits }),
    ...(file.retention === undefined ? {} : { retention: file.retention }),
    ...(file.signatures === undefined ? {} : { signatures: file.signatures }),
  }
}

interface ConfigFile {
  provider?: Partial<ProviderNames>
  limits?: Partial<Limits>
  retention?: { days: number }
  signatures?: SignatureOptions
}

async function readConfigFile(path: string): Promise<ConfigFile> {
  let parsed: unknown
  try {
    parsed = JSON.parse(await readFile(path, 'utf8'))
  } catch (err) {
    throw new CliError(`cannot read config file ${path}: ${err instanceof Error ? err.message : String(err)}`, 2, {
      cause: err,
    })
  }
  const bad = (what: string): CliError => new CliError(`config file ${path}: ${what}`, 2)
  if (!isPlainObject(parsed)) throw bad('must hold a JSON object')
  for (const key of Object.keys(parsed)) {
    if (key !== 'provider' && key !== 'limits' && key !== 'retention' && key !== 'signatures') {
      throw bad(`unknown key ${JSON.stringify(key)} (expected "provider", "limits", "retention", "signatures")`)
    }
  }
  const config: ConfigFile = {}
  if (parsed.provider !== undefined) {
    if (!isPlainObject(parsed.provider)) throw bad('"provider" must be an object')
    const provider: { -readonly [K in keyof Provider]?: string } & { aliases?: string[] } = {}
    for (const [key, value] of Object.entries(parsed.provider)) {
      if (key === 'aliases') {
        if (!Array.isArray(value) || !value.every((alias) => typeof alias === 'string')) throw bad('"provider.aliases" must be an array of strings')
        provider.aliases = value as string[]
        continue
      }
      if (key !== 'name' && key !== 'id' && key !== 'publicKey') {
        throw bad(`unknown key "provider.${key}" (expected "name", "id", "publicKey", "aliases")`)
      }
      if (typeof value !== 'string') throw bad(`"provider.${key}" must be a string`)
      provider[key] = value
    }
    config.provider = provider
  }
  if (parsed.limits !== undefined) {
    if (!isPlainObject(parsed.limits)) throw bad('"limits" must be an object')
    // The store validates the values themselves (PRICE_INVALID_OPTIONS).
    config.limits = parsed.limits as Partial<Limits>
  }
  if (parsed.retention !== undefined) {
    if (!isPlainObject(parsed.retention)) throw bad('"retention" must be an object {"days": N}')
    // The store validates the days (PRICE_INVALID_OPTIONS).
    config.retention = parsed.retention as { days: number }
  }
  if (parsed.signatures !== undefined) {
    if (!isPlainObject(parsed.signatures)) throw bad('"signatures" must be an object {"policy": "off" | "flag" | "reject", "evmSigners": [...]}')
    // The store validates the values themselves (PRICE_INVALID_OPTIONS).
    config.signatures = parsed.signatures as SignatureOptions
  }
  return config
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
