import type { AbstractLevel } from 'abstract-level'
import { PriceStoreError } from '../../errors.js'
import { STORE_FORMAT, checkStoreFormat } from '../../keys/format-version.js'
import { META_KEYS } from '../../keys/meta-keys.js'
import type { Provider } from '../../types.js'
import type { BytesSublevel } from '../db/sublevels.js'

const FORMAT_KEY = META_KEYS.format
const PROVIDER_KEY = META_KEYS.provider

/** The meta sublevel (opened with byte encodings, like every sublevel: its keys and values are read and written as UTF-8 per call). */
type MetaSublevel = BytesSublevel
/**
 * Meta keys and values are UTF-8 text: given per call, so the store opens the
 * sublevel once (the calls are typed loosely, since per-call encodings change
 * the sublevel's key and value types).
 */
const TEXT = { keyEncoding: 'utf8', valueEncoding: 'utf8' } as const

/**
 * Checks a database's format version and provider, or records them in a new
 * database. A database of another format is refused, naming the way over
 * (keys/format-version.ts, the one check of it). A store belongs to one provider: opening it
 * as another would relabel every stored record, so it is refused.
 * @throws PriceStoreError `PRICE_UNSUPPORTED_FORMAT`, `PRICE_PROVIDER_MISMATCH`
 */
export async function checkFormat(meta: MetaSublevel, root: AbstractLevel<any, any, any>, provider: Provider): Promise<void> {
  const [format, storedProvider] = (await meta.getMany([FORMAT_KEY, PROVIDER_KEY] as never, TEXT as never)) as unknown as (string | undefined)[]
  if (format === undefined) {
    const anything = (await root.keys({ limit: 1, keyEncoding: 'view' }).all()).length > 0
    if (anything) {
      throw new PriceStoreError('PRICE_UNSUPPORTED_FORMAT', 'the database holds data but no format version; it was not written by price-store')
    }
    await meta.batch([
      { type: 'put', key: FORMAT_KEY, value: String(STORE_FORMAT) },
      { type: 'put', key: PROVIDER_KEY, value: JSON.stringify({ name: provider.name, id: provider.id, publicKey: provider.publicKey }) },
    ] as never, TEXT as never)
    return
  }
  checkStoreFormat(format)
  const stored = parseProvider(storedProvider)
  if (stored === undefined) throw new PriceStoreError('PRICE_UNSUPPORTED_FORMAT', 'the database records no readable provider')
  if (stored.id !== provider.id || stored.publicKey !== provider.publicKey) {
    const differs = stored.id !== provider.id ? 'id' : 'public key'
    throw new PriceStoreError(
      'PRICE_PROVIDER_MISMATCH',
      `the store was created for provider id ${JSON.stringify(stored.id)} with public key ${JSON.stringify(stored.publicKey)}; ` +
        `it was opened with id ${JSON.stringify(provider.id)} and public key ${JSON.stringify(provider.publicKey)} (the ${differs} differs). ` +
        'Open it with the provider it was created for, or import the records into a new store',
      { details: { field: 'provider' } },
    )
  }
}


/**
 * The provider a database records, or `undefined` when it records no format yet (no store has opened it).
 * @throws PriceStoreError `PRICE_UNSUPPORTED_FORMAT` when it has a format but no readable provider
 */
export async function readProvider(meta: MetaSublevel): Promise<Provider | undefined> {
  const [format, storedProvider] = (await meta.getMany([FORMAT_KEY, PROVIDER_KEY] as never, TEXT as never)) as unknown as (string | undefined)[]
  if (format === undefined) return undefined
  const stored = parseProvider(storedProvider)
  if (stored === undefined) throw new PriceStoreError('PRICE_UNSUPPORTED_FORMAT', 'the database records no readable provider')
  return Object.freeze({ name: stored.name, id: stored.id, publicKey: stored.publicKey })
}

function parseProvider(text: string | undefined): Provider | undefined {
  if (text === undefined) return undefined
  try {
    const value = JSON.parse(text) as Partial<Provider>
    return typeof value.id === 'string' && typeof value.publicKey === 'string' && typeof value.name === 'string' ? (value as Provider) : undefined
  } catch {
    return undefined
  }
}
