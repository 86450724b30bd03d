/**
 * A store directory that appears whole or not at all: it is written into
 * `DIR.partial`, marked by a file inside as work in progress, flushed to
 * the disk, and only then renamed to `DIR`. A writer killed or failing
 * leaves no `DIR`; the next writer to `DIR` removes the marked leftover.
 * Used by `store.backup()` and by a snapshot's restore (price-store/cluster).
 */
import { mkdir, open, readdir, rename, rm, stat, unlink, writeFile } from 'node:fs/promises'
import { dirname, join, resolve } from 'node:path'
import { PriceStoreError, describeValue } from '../../errors.js'

/** The file that marks `DIR.partial` as work in progress, so a later writer may remove it. */
export const PARTIAL_MARKER = 'PRICE-STORE-BACKUP-PARTIAL'

/**
 * The absolute target, which must not exist or be an empty directory.
 * @throws PriceStoreError `PRICE_INVALID_OPTIONS` (parameter `dir`) when it holds anything
 */
export async function newDirectoryTarget(dir: unknown, what: string): Promise<string> {
  if (typeof dir !== 'string' || dir.length === 0) throw invalidDir(`dir must be a non-empty path (got ${describeValue(dir)})`)
  const target = resolve(dir)
  const found = await stat(target).catch(() => undefined)
  if (found === undefined) return target
  if (!found.isDirectory()) throw invalidDir(`${target} exists and is not a directory; ${what} goes into a new directory`)
  if ((await readdir(target)).length > 0) throw invalidDir(`${target} is not empty; ${what} goes into a new (or empty) directory`)
  return target
}

/**
 * Removes what a killed writer left at `partial` (marked with {@link PARTIAL_MARKER}); refuses anything else there.
 * @throws PriceStoreError `PRICE_INVALID_OPTIONS` (parameter `dir`) for an unmarked `partial`
 */
async function clearLeftover(partial: string, what: string): Promise<void> {
  const found = await stat(partial).catch(() => undefined)
  if (found === undefined) return
  const marked = found.isDirectory() && (await stat(join(partial, PARTIAL_MARKER)).catch(() => undefined)) !== undefined
  if (!marked) throw invalidDir(`${partial} exists and was not left by ${what}; move it away, since ${what} is written there first`)
  await rm(partial, { recursive: true, force: true })
}

/**
 * Has `write` fill `DIR.partial` (a leftover of a killed writer removed first, the new one marked), flushes it to the
 * disk and renames it to `target`. On any failure, `DIR.partial` is removed and there is no `target`.
 * @throws PriceStoreError `PRICE_INVALID_OPTIONS` (parameter `dir`) for an unmarked `DIR.partial`; what `write` throws
 */
export async function writeWholeDirectory<T>(target: string, what: string, write: (partial: string) => Promise<T>): Promise<T> {
  const partial = `${target}.partial`
  await clearLeftover(partial, what)
  await mkdir(partial, { recursive: true })
  let result: T
  try {
    await writeFile(join(partial, PARTIAL_MARKER), `price-store: ${what} in progress into ${target}; safe to delete\n`)
    result = await write(partial)
    // Durable before it gets its name: LevelDB does not fsync what it writes unless asked to.
    await syncFiles(partial)
    await rename(partial, target)
  } catch (err) {
    await rm(partial, { recursive: true, force: true }).catch(() => {})
    throw err
  }
  await unlink(join(target, PARTIAL_MARKER))
  await syncDirectory(dirname(target))
  return result
}

/** Flushes every file of a (flat) directory to the disk, then the directory itself. */
async function syncFiles(path: string): Promise<void> {
  for (const entry of await readdir(path, { withFileTypes: true })) {
    if (!entry.isFile()) continue
    const handle = await open(join(path, entry.name), 'r+')
    try {
      await handle.sync()
    } finally {
      await handle.close()
    }
  }
  await syncDirectory(path)
}

/** Makes a rename or a new file in `path` durable (POSIX); where a directory cannot be opened for it (Windows), it stands as it is. */
async function syncDirectory(path: string): Promise<void> {
  const handle = await open(path, 'r').catch(() => undefined)
  try {
    await handle?.sync()
  } catch {
    // Some file systems refuse fsync on a directory: the rename is still done.
  } finally {
    await handle?.close()
  }
}

function invalidDir(message: string): PriceStoreError {
  return new PriceStoreError('PRICE_INVALID_OPTIONS', message, { details: { parameter: 'dir' } })
}
