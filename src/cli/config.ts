import { readFile } from 'node:fs/promises'
import { resolve } from 'node:path'
import type { ProviderNames } from '../engine/parse-query.js'
import type { SignatureOptions } from '../store/signatures/signature-options.js'
import type { Limits, Provider } from '../types.js'
import { REDSTONE_PROVIDER } from '../store/lifecycle/redstone-provider.js'
import { CliError } from './args.js'
import { ENV, readEnvironment, type CliEnvironment } from './environment.js'

/** Where commands keep the database unless `--db` says otherwise (git-ignored). */
export const DEFAULT_DB = './data/prices'

/**
 * The provider a new database is created for unless configured otherwise:
 * RedStone's main provider ({@link REDSTONE_PROVIDER}, exported by the
 * library). An existing database is opened as the provider it records.
 */
export const DEFAULT_PROVIDER: Provider = REDSTONE_PROVIDER

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
  --db PATH                   database directory (default $${ENV.db}, else ${DEFAULT_DB})
  --config FILE               JSON file: {"provider": {"name", "id", "publicKey", "aliases"}, "limits": {...},
                              "retention": {"days": N}, "signatures": {"policy", "evmSigners"}}
                              (retention is applied by serve)
                              The provider flags and "provider" in --config may be left out: a database is
                              opened as the provider it records, and a new one is created for RedStone's
                              (name ${DEFAULT_PROVIDER.name}, id ${DEFAULT_PROVIDER.id})
  --provider-name NAME        provider short name (default: the recorded one, RedStone's, or the id)
  --provider-id ID            provider id, the "provider" field of every record (default: the recorded
                              one, else RedStone's); another provider's id needs its --provider-public-key
  --provider-public-key KEY   provider public key, joined into every answer (default: the recorded one,
                              or RedStone's published key for RedStone's id)
  --provider-alias NAME       another name the provider parameter accepts for this provider
                              (repeatable; e.g. redstone-rapid, which redstone-api's query builder sends)
  -h, --help                  show this help`

/** How to open the store: resolved from flags, then the config file, then defaults. */
export interface StoreConfig {
  /** Absolute database directory. */
  readonly location: string
  /**
   * The provider as flags and `--config` give it; the fields left out come from the provider the database
   * records, else from {@link DEFAULT_PROVIDER} ({@link chooseProvider}, when the store is opened).
   */
  readonly provider: ProviderChoice
  readonly limits?: Partial<Limits>
  /** Keep only the last `days` days (the store's `retention` option): from `--config`, or `serve --retention-days`. */
  readonly retention?: { readonly days: number }
  /** The store's `signatures` option: from `--config`, or the signature flags (signature-flags.ts). */
  readonly signatures?: SignatureOptions
  /** The store's `cursorSecret` option: `serve --cursor-secret-file` (cursor-secret-file.ts). */
  readonly cursorSecret?: Uint8Array
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

/** Provider fields given by flags or `--config`; see {@link StoreConfig.provider}. */
export interface ProviderChoice {
  readonly name?: string | undefined
  readonly id?: string | undefined
  readonly publicKey?: string | undefined
  readonly aliases?: readonly string[] | undefined
}

/**
 * Resolves the store configuration. Each provider field comes from its flag,
 * else from `--config`, else (when the store opens) from the provider the
 * database records, else from {@link DEFAULT_PROVIDER}. The database is
 * `--db`, else `PRICE_STORE_DB`, else {@link DEFAULT_DB}.
 *
 * @param environment the environment variables (the process's unless a test injects them)
 * @throws CliError (exit code 2) when the config file is unreadable or malformed.
 */
export async function resolveStoreConfig(values: StoreOptionValues, environment: CliEnvironment = readEnvironment()): Promise<StoreConfig> {
  const file = values.config === undefined ? {} : await readConfigFile(values.config)
  const given = {
    name: values['provider-name'] ?? file.provider?.name,
    id: values['provider-id'] ?? file.provider?.id,
    publicKey: values['provider-public-key'] ?? file.provider?.publicKey,
    aliases: values['provider-alias'] ?? file.provider?.aliases,
  }
  const provider = Object.fromEntries(Object.entries(given).filter(([, value]) => value !== undefined)) as ProviderChoice
  const location = resolve(values.db ?? environment.db ?? DEFAULT_DB)
  return {
    location, provider,
    ...(file.limits === undefined ? {} : { limits: file.limits }),
    ...(file.retention === undefined ? {} : { retention: file.retention }),
    ...(file.signatures === undefined ? {} : { signatures: file.signatures }),
  }
}

/**
 * The provider to open a store with: each field as given, else the one the
 * database records (`stored`), else {@link DEFAULT_PROVIDER}'s. A public key
 * is only ever taken with its own id: another id than the recorded and the
 * default one needs its key given, never RedStone's (which would label every
 * record and answer with the wrong key). The name of a provider known by
 * neither defaults to its id.
 * @throws CliError (exit code 2) for an id without its public key
 */
export function chooseProvider(choice: ProviderChoice, stored: Provider | undefined): ProviderNames {
  const id = choice.id ?? stored?.id ?? DEFAULT_PROVIDER.id
  const known = stored?.id === id ? stored : DEFAULT_PROVIDER.id === id ? DEFAULT_PROVIDER : undefined
  const publicKey = choice.publicKey ?? known?.publicKey
  if (publicKey === undefined) {
    throw new CliError(
      `--provider-id ${JSON.stringify(id)} needs its --provider-public-key (or "provider.publicKey" in --config): ` +
        `the key is joined into every answer, and only ${stored === undefined ? "RedStone's provider" : "the database's own provider and RedStone's"} ` +
        'have a key to default to',
      2,
    )
  }
  return {
    name: choice.name ?? known?.name ?? id, id, publicKey,
    ...(choice.aliases === undefined ? {} : { aliases: [...choice.aliases] }),
  }
}

/** Whether {@link chooseProvider} needs the provider the database records: when a name, id or key is left out. */
export function needsStoredProvider(choice: ProviderChoice): boolean {
  return choice.name === undefined || choice.id === undefined || choice.publicKey === undefined
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
    // The file configures the store, for every command; the NATS connection is serve's alone, and its secrets live in files of their own.
    if (key === 'nats') throw bad('"nats" is not read from a config file: give serve the NATS servers, credentials and TLS as flags (--nats, --nats-creds, --nats-user with --nats-password-file, --nats-tls-ca, ...; see docs/cluster.md#secure-deployment)')
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
