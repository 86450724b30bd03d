import { readFile, rm, writeFile } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { DEFAULT_DB } from './config.js'

/**
 * A file in a database directory saying the store holds only the demo data
 * set, so a later release may rebuild it instead of asking its owner to.
 * LevelDB leaves files it does not know alone, and removing the directory
 * removes the mark with it.
 */
export const DEMO_MARKER = 'PRICE-STORE-DEMO'

/** Marks the store at `location` as holding only demo data (after writing the demo into an empty store). */
export async function markDemo(location: string, writtenBy: string): Promise<void> {
  const note = { demo: true, writtenBy, at: new Date().toISOString(), meaning: 'this database holds only the generated demo data set; price-store may rebuild it' }
  await writeFile(join(location, DEMO_MARKER), `${JSON.stringify(note, null, 2)}\n`)
}

/** Whether the store at `location` is known to hold only demo data. */
export async function isMarkedDemo(location: string): Promise<boolean> {
  const text = await readFile(join(location, DEMO_MARKER), 'utf8').catch(() => undefined)
  if (text === undefined) return false
  try {
    return (JSON.parse(text) as { demo?: unknown }).demo === true
  } catch {
    return false
  }
}

/** Removes the mark: the store now holds someone's own records. */
export async function unmarkDemo(location: string): Promise<void> {
  await rm(join(location, DEMO_MARKER), { force: true })
}

/** Whether `location` is where `npm start` keeps its demo database. */
export function isDefaultLocation(location: string): boolean {
  return resolve(location) === resolve(DEFAULT_DB)
}
