/**
 * The store `serve` opens: with `--demo-if-empty`, a demo database of a
 * format this release cannot read is rebuilt rather than refused.
 */
import { rename, rm, stat } from 'node:fs/promises'
import { isPriceStoreError } from '../errors.js'
import type { PriceStoreError } from '../errors.js'
import type { PriceStore } from '../store/price-store.js'
import { CliError } from './args.js'
import { DEFAULT_DB, type StoreConfig } from './config.js'
import { DEMO_MARKER, isDefaultLocation, isMarkedDemo } from './demo-marker.js'
import type { CliIo } from './io.js'
import { crossOver, openStore, storedFormat, unreadable } from './open-store.js'
import { announceRetention } from './retention-notice.js'

/**
 * Opens the store to serve. With `--demo-if-empty`, a demo database another
 * version of price-store wrote (a format this one cannot read) is rebuilt:
 * one marked as a demo is deleted, the one at the default location (which
 * older releases did not mark) is moved aside, and the empty store that
 * replaces it gets the demo data. Any other database is left untouched.
 */
export async function openServedStore(config: StoreConfig, demoIfEmpty: boolean, io: CliIo): Promise<PriceStore> {
  // Retention prunes as soon as the store opens: say what goes first.
  await announceRetention(config, io)
  try {
    return await openStore(config, { mustExist: false, retention: true })
  } catch (err) {
    const refused = err instanceof CliError ? err.cause : undefined
    if (!demoIfEmpty || !isPriceStoreError(refused, 'PRICE_UNSUPPORTED_FORMAT')) throw err
    await clearOldDemo(config.location, refused, io)
    return openStore(config, { mustExist: false, retention: true })
  }
}

/** Deletes or moves aside an unreadable demo database; refuses (untouched) anything else. */
async function clearOldDemo(location: string, refused: PriceStoreError, io: CliIo): Promise<void> {
  if (await isMarkedDemo(location)) {
    io.stderr.write(`the demo database at ${location} ${unreadable(refused)}: deleting it to write the demo data again\n`)
    await rm(location, { recursive: true, force: true })
    return
  }
  if (isDefaultLocation(location)) {
    // Older releases did not mark their demo database, and someone may have imported records here: keep a copy.
    const aside = await unusedPath(`${location}.${storedFormat(refused) === undefined ? 'unreadable' : `format-${storedFormat(refused)}`}`)
    await rename(location, aside)
    io.stderr.write(
      `the database at ${location} (where "npm start" keeps the demo data) ${unreadable(refused)}: ` +
        `moved it to ${aside} (delete that copy once you no longer need it) to write the demo data again\n`,
    )
    return
  }
  throw new CliError(
    `the database at ${location} ${unreadable(refused)}. It is not the demo database (that one is at ${DEFAULT_DB}, or carries the ` +
      `${DEMO_MARKER} mark of "serve --demo-if-empty" and "price-store demo"), so --demo-if-empty left it untouched. ` +
      `${crossOver(location)}. [${refused.code}]`,
    1,
    { cause: refused },
  )
}

/** `base`, or `base-2`, `base-3`, ... whichever does not exist yet. */
async function unusedPath(base: string): Promise<string> {
  for (let n = 1; ; n++) {
    const path = n === 1 ? base : `${base}-${n}`
    if ((await stat(path).catch(() => undefined)) === undefined) return path
  }
}
