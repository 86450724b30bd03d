import { createHash } from 'node:crypto'
import { mkdir, stat } from 'node:fs/promises'
import { PriceStore } from '../store/price-store.js'
import { isPriceStoreError } from '../errors.js'
import type { PriceStoreError } from '../errors.js'
import type { Provider } from '../types.js'
import { CliError } from './args.js'
import { chooseProvider, needsStoredProvider, type StoreConfig } from './config.js'
import type { ProviderNames } from '../engine/parse-query.js'

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
 * The provider fields not given come from the provider the database records
 * (so only the first command names a store's own provider), else from
 * RedStone's ({@link chooseProvider}).
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
  }
  let provider: ProviderNames | undefined
  try {
    // Read before creating the directory: an id without its key is refused with nothing made.
    const stored = needsStoredProvider(config.provider) ? await PriceStore.storedProvider(location) : undefined
    provider = chooseProvider(config.provider, stored)
    if (!mustExist) await mkdir(location, { recursive: true })
    const { limits, signatures, cursorSecret } = config
    return await PriceStore.open(location, {
      provider, ...(limits === undefined ? {} : { limits }), ...(retention && config.retention !== undefined ? { retention: config.retention } : {}),
      ...(signatures === undefined ? {} : { signatures }), ...(cursorSecret === undefined ? {} : { cursorSecret }),
    })
  } catch (err) {
    throw await explainOpenFailure(err, location, provider, whileServed)
  }
}

/** The failure to report for an error of `PriceStore.open`: plain words for the ones a person can fix, the error itself otherwise. */
async function explainOpenFailure(err: unknown, location: string, given: ProviderNames | undefined, whileServed: string | undefined): Promise<unknown> {
  if (isPriceStoreError(err, 'PRICE_LOCKED')) {
    // Any process may hold it: a server, an import, another command, a program using the library.
    return new CliError(
      `the database at ${location} is in use by another process (e.g. "price-store serve", an import or another command on it); ` +
        'wait for it to finish or stop it, or choose another --db' +
        (whileServed === undefined ? '' : `; if it is a server, ${whileServed}`) +
        ` [${err.code}]`,
      1,
      { cause: err },
    )
  }
  if (isPriceStoreError(err, 'PRICE_PROVIDER_MISMATCH') && given !== undefined) {
    // The store is closed again after a refusal: its recorded provider can be read for the message.
    const stored = await PriceStore.storedProvider(location).catch(() => undefined)
    return new CliError(providerMismatch(location, stored, given, err), 1, { cause: err })
  }
  if (isPriceStoreError(err, 'PRICE_UNSUPPORTED_FORMAT')) {
    return new CliError(
      `the database at ${location} ${unreadable(err)}, and was left as it was. ${crossOver(location)}; if it is the demo database, ` +
        `"npm start" ("price-store serve --demo-if-empty") rebuilds it by itself. [${err.code}]`,
      1,
      { cause: err },
    )
  }
  return err
}

/** How the records of a database of another format reach this release: as NDJSON, never by converting it in place. */
export function crossOver(location: string): string {
  return `Its records cross over as NDJSON: export them with the release that wrote it ("price-store export --db ${location} > records.ndjson"), ` +
    `then import them with this one into a new database, naming the same provider ("price-store import --db NEW_DIR [provider flags] records.ndjson")`
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

/** Names the stored provider and the given one briefly (ids, and keys by fingerprint), what differs, and which flags to use. */
function providerMismatch(location: string, stored: Provider | undefined, given: Provider, err: PriceStoreError): string {
  const fix = 'Leave out the provider flags to open it as its own provider, or choose another --db.'
  if (stored === undefined) return `the database at ${location} was created for another provider. ${fix} [${err.code}]`
  const differs = [stored.id !== given.id ? 'id' : undefined, stored.publicKey !== given.publicKey ? 'public key' : undefined].filter(Boolean).join(' and ')
  return (
    `the database at ${location} was created for another provider: it holds records of provider id ${JSON.stringify(stored.id)} ` +
    `with public key ${showKey(stored.publicKey)}, and this command was given provider id ${JSON.stringify(given.id)} ` +
    `with public key ${showKey(given.publicKey)}; the ${differs} ${differs.includes(' and ') ? 'differ' : 'differs'}. ${fix} [${err.code}]`
  )
}

/** A public key short enough to read: a long one (RSA keys are hundreds of characters) by its fingerprint, the first 8 hex digits of its SHA-256. */
export function showKey(key: string): string {
  return key.length <= 48 ? JSON.stringify(key) : `sha256:${createHash('sha256').update(key).digest('hex').slice(0, 8)}`
}
