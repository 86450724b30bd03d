import { readFile, rename, rm, writeFile } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { DEFAULT_DB } from './config.js'

/**
 * A file in a database directory saying the store holds only the demo data
 * set, so a later release may rebuild it instead of asking its owner to.
 * LevelDB leaves files it does not know alone, and removing the directory
 * removes the mark with it.
 */
export const DEMO_MARKER = 'PRICE-STORE-DEMO'

/** What demo set a store holds: enough to write the same records again. */
export interface DemoRecipe {
  readonly durationMs?: number
  readonly end?: number
  readonly seed?: string
}

/** What the mark says about a demo store. */
export interface DemoMark {
  /** False from before the first record is written until after the last one: an interrupted demo stays false. */
  readonly finished: boolean
  /** The command that wrote it, e.g. `price-store demo`. */
  readonly writtenBy: string
  readonly recipe: DemoRecipe
}

/**
 * Marks the store at `location` as holding only demo data: with
 * `finished: false` before writing the demo into an empty store, with
 * `finished: true` after its last batch. The file is replaced whole (written
 * aside, then renamed), so a crash never leaves half a mark.
 */
export async function markDemo(location: string, mark: DemoMark): Promise<void> {
  const note = {
    demo: true,
    finished: mark.finished,
    writtenBy: mark.writtenBy,
    recipe: mark.recipe,
    at: new Date().toISOString(),
    meaning: mark.finished
      ? 'this database holds only the generated demo data set; price-store may rebuild it'
      : 'this database holds part of the generated demo data set, being written (or interrupted); "price-store serve --demo-if-empty" finishes it',
  }
  const path = join(location, DEMO_MARKER)
  await writeFile(`${path}.new`, `${JSON.stringify(note, null, 2)}\n`)
  await rename(`${path}.new`, path)
}

/**
 * The mark of the store at `location`, or `undefined` when it is not known
 * to hold only demo data. A mark without `finished` was written by an older
 * release, which marked a demo only once it was complete: it counts as finished.
 */
export async function readDemoMark(location: string): Promise<DemoMark | undefined> {
  const text = await readFile(join(location, DEMO_MARKER), 'utf8').catch(() => undefined)
  if (text === undefined) return undefined
  let note: { demo?: unknown; finished?: unknown; writtenBy?: unknown; recipe?: unknown }
  try {
    note = JSON.parse(text) as typeof note
  } catch {
    return undefined
  }
  if (note.demo !== true) return undefined
  return {
    finished: note.finished !== false,
    writtenBy: typeof note.writtenBy === 'string' ? note.writtenBy : 'price-store',
    recipe: readRecipe(note.recipe),
  }
}

/** Whether the store at `location` is known to hold only demo data (finished or not). */
export async function isMarkedDemo(location: string): Promise<boolean> {
  return (await readDemoMark(location)) !== undefined
}

/** Removes the mark: the store now holds someone's own records. */
export async function unmarkDemo(location: string): Promise<void> {
  await rm(join(location, DEMO_MARKER), { force: true })
}

/** Whether `location` is where `npm start` keeps its demo database. */
export function isDefaultLocation(location: string): boolean {
  return resolve(location) === resolve(DEFAULT_DB)
}

/** The recipe fields of the right types; anything else is left to the defaults. */
function readRecipe(value: unknown): DemoRecipe {
  if (typeof value !== 'object' || value === null) return {}
  const { durationMs, end, seed } = value as Record<string, unknown>
  return {
    ...(Number.isSafeInteger(durationMs) ? { durationMs: durationMs as number } : {}),
    ...(Number.isSafeInteger(end) ? { end: end as number } : {}),
    ...(typeof seed === 'string' ? { seed } : {}),
  }
}
