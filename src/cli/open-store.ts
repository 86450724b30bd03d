import { mkdir, stat } from 'node:fs/promises'
import { PriceStore, isPriceStoreError } from '../index.js'
import { CliError } from './args.js'
import type { StoreConfig } from './config.js'

/**
 * Opens the store at `config.location`, turning the failures a person hits
 * into plain words.
 *
 * @param mustExist when true (read-only commands), a missing database is an
 *   error instead of being created empty.
 */
export async function openStore(config: StoreConfig, { mustExist }: { mustExist: boolean }): Promise<PriceStore> {
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
    return await PriceStore.open(location, config.limits === undefined ? { provider: config.provider } : config)
  } catch (err) {
    if (isPriceStoreError(err, 'PRICE_LOCKED')) {
      throw new CliError(
        `the database at ${location} is in use by another process (is "price-store serve" running on it?); stop that process or choose another --db`,
        1,
        { cause: err },
      )
    }
    throw err
  }
}
