/** Reading the provider a database records, without opening a store on it. */
import { access } from 'node:fs/promises'
import { join } from 'node:path'
import type { AbstractLevel } from 'abstract-level'
import { ClassicLevel } from 'classic-level'
import type { Provider } from '../../types.js'
import { toStorageError } from '../db/storage-errors.js'
import { createSublevels } from '../db/sublevels.js'
import { readProvider } from './format.js'
import { checkLocation } from './location.js'

/**
 * The provider `location` records (its name, id and public key), or
 * `undefined` for a database that records none yet: a directory that does
 * not exist or holds no LevelDB database, or a database no store has opened.
 * Nothing is created or changed; a directory is opened (never created) for the
 * moment of the read and closed again, and a database passed in is left
 * open or closed as it was.
 * @example
 * const provider = (await PriceStore.storedProvider(dir)) ?? REDSTONE_PROVIDER
 * const store = await PriceStore.open(dir, { provider })
 * @throws PriceStoreError `PRICE_INVALID_OPTIONS` for an empty location,
 *   `PRICE_LOCKED` when another process or store holds the directory,
 *   `PRICE_UNSUPPORTED_FORMAT` when the recorded provider cannot be read,
 *   `PRICE_STORAGE_ERROR`
 */
export async function readStoredProvider(location: string | AbstractLevel<any, any, any>): Promise<Provider | undefined> {
  checkLocation(location)
  if (typeof location === 'string') {
    // LevelDB writes CURRENT when it creates a database: without it there is nothing to read (and nothing is created).
    if (!(await access(join(location, 'CURRENT')).then(() => true, () => false))) return undefined
    const db = new ClassicLevel(location, { createIfMissing: false }) as unknown as AbstractLevel<any, any, any>
    return await readFrom(db, true)
  }
  return await readFrom(location, location.status !== 'open')
}

async function readFrom(db: AbstractLevel<any, any, any>, openHere: boolean): Promise<Provider | undefined> {
  try {
    if (openHere) await db.open({ createIfMissing: false })
    const { meta } = createSublevels(db)
    await meta.open()
    return await readProvider(meta)
  } catch (err) {
    throw toStorageError(err, 'read the stored provider')
  } finally {
    if (openHere) await db.close().catch(() => {})
  }
}
