import { mkdir, stat } from 'node:fs/promises'
import { PriceStore } from '../store/price-store.js'
import { isPriceStoreError } from '../errors.js'
import type { PriceStoreError } from '../errors.js'
import type { Provider } from '../types.js'
import { CliError } from './args.js'
import type { StoreConfig } from './config.js'

/** Options of {@link openStore}. */
export interface OpenStoreOptions {
  readonly mustExist: boolean
  readonly retention?: boolean
  /** What to do instead while a server holds the database (e.g. the HTTP endpoint answering the same), added to the `PRICE_LOCKED` message. */
  readonly whileServed?: string
}

/**
 * Opens the store at `config.location`, turning the failures a person hits
 * into plain words (a {@link CliError} whose `cause` is the library's error).
 *
 * @param mustExist when true (read-only commands), a missing database is an
 *   error instead of being created empty.
 * @param retention when true (`serve`), `config.retention` is applied; other
 *   commands never remove records in the background.
 */
export async function openStore(config: StoreConfig, { mustExist, retention = false, whileServed }: OpenStoreOptions): Promise<PriceStore> {
  const { location } = config
  if (mustExist) {
    const found = await stat(location).catch(() => undefined)
    if (found?.isDirectory() !== true) {
      throw new CliError(`there is no database at ${location} (write one with "price-store import" or "price-store demo")`)
    }
  } else {
    // LevelDB creates the last directory only; `./data` does not exist on a fresh clone.
    await mkdir(location, { recursive: true })
  }
  try {
    const { provider, limits, signatures } = config
    return await PriceStore.open(location, {
      provider, ...(limits === undefined ? {} : { limits }), ...(retention && config.retention !== undefined ? { retention: config.retention } : {}),
      ...(signatures === undefined ? {} : { signatures }),
    })
  } catch (err) {
    throw explainOpenFailure(err, config, whileServed)
  }
}

/** The failure to report for an error of `PriceStore.open`: plain words for the ones a person can fix, the error itself otherwise. */
function explainOpenFailure(err: unknown, config: StoreConfig, whileServed: string | undefined): unknown {
  const { location } = config
  if (isPriceStoreError(err, 'PRICE_LOCKED')) {
    return new CliError(
      `the database at ${location} is in use by another process (is "price-store serve" running on it?); stop that process or choose another --db` +
        (whileServed === undefined ? '' : `, or, while it serves, ${whileServed}`),
      1,
      { cause: err },
    )
  }
  if (isPriceStoreError(err, 'PRICE_PROVIDER_MISMATCH')) return new CliError(providerMismatch(err, config), 1, { cause: err })
  if (isPriceStoreError(err, 'PRICE_UNSUPPORTED_FORMAT')) {
    return new CliError(
      `the database at ${location} ${unreadable(err)}. Move it away (or delete it) and import the records again into a new database ` +
        `("price-store import --db ${location} FILE..."); if it is the demo database, "npm start" ` +
        `("price-store serve --demo-if-empty") rebuilds it by itself. [${err.code}]`,
      1,
      { cause: err },
    )
  }
  return err
}

/** Why a store refused with `PRICE_UNSUPPORTED_FORMAT` cannot be read, to follow "the database at X". */
export function unreadable(err: PriceStoreError): string {
  const format = storedFormat(err)
  return format === undefined
    ? `cannot be read by price-store (${err.message})`
    : `is in format ${JSON.stringify(format)}, written by another version of price-store, which this version cannot read`
}

/**
 * The format a store was refused for, from the library's message
 * (`undefined` when it has none, e.g. a database not written by price-store).
 */
export function storedFormat(err: PriceStoreError): string | undefined {
  const match = /format version ("(?:[^"\\]|\\.)*")/.exec(err.message)
  return match === null ? undefined : (JSON.parse(match[1] as string) as string)
}

/** Names the stored provider and the given one, what differs, and which flags to use. */
function providerMismatch(err: PriceStoreError, config: StoreConfig): string {
  const given = config.provider
  const quoted = '("(?:[^"\\\\]|\\\\.)*")'
  const match = new RegExp(`created for provider id ${quoted} with public key ${quoted}`).exec(err.message)
  const fix = 'Give the store\'s own provider with --provider-id and --provider-public-key (or "provider" in --config FILE), or choose another --db.'
  if (match === null) return `the database at ${config.location} was created for another provider: ${err.message}. ${fix} [${err.code}]`
  const stored: Provider = { name: '', id: JSON.parse(match[1] as string) as string, publicKey: JSON.parse(match[2] as string) as string }
  const differs = [stored.id !== given.id ? 'id' : undefined, stored.publicKey !== given.publicKey ? 'public key' : undefined].filter(Boolean).join(' and ')
  return (
    `the database at ${config.location} was created for another provider: it holds records of provider id ${JSON.stringify(stored.id)} ` +
    `with public key ${showKey(stored.publicKey)}, and this command was given provider id ${JSON.stringify(given.id)} ` +
    `with public key ${showKey(given.publicKey)}; the ${differs} ${differs.includes(' and ') ? 'differ' : 'differs'}. ${fix} [${err.code}]`
  )
}

/** A public key short enough to read: long keys (RSA keys are hundreds of characters) by their ends and length. */
function showKey(key: string): string {
  return key.length <= 48 ? JSON.stringify(key) : `"${key.slice(0, 16)}…${key.slice(-8)}" (${key.length} characters)`
}
