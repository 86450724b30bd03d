import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { MemoryLevel } from 'memory-level'
import { afterAll, beforeAll } from 'vitest'

/** One database kind a property runs on: a fresh location per run, and how many runs it gets. */
export interface PropertyBackend {
  readonly name: 'memory-level' | 'classic-level'
  readonly numRuns: number
  /** A new, empty database: a MemoryLevel, or a directory for classic-level. */
  location(): MemoryLevel<string, string> | string
}

/** What {@link propertyBackends} gives a test file. */
export interface PropertyBackends {
  /** memory-level and classic-level, for `describe.each`. */
  readonly backends: readonly PropertyBackend[]
  /** A path, not yet created, under the file's temporary root (e.g. for a backup). */
  newPath(name: string): string
}

/**
 * memory-level and classic-level for a property test file: each
 * classic-level run gets a directory of its own under a temporary root
 * (named by `prefix`), made before the file's tests and removed after them.
 */
export function propertyBackends(prefix: string, runs: { readonly memory: number; readonly classic: number }): PropertyBackends {
  let root = ''
  let count = 0
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), `price-store-${prefix}-`))
  })
  afterAll(async () => {
    await rm(root, { recursive: true, force: true })
  })
  const newPath = (name: string): string => join(root, `${name}-${count++}`)
  return {
    backends: [
      { name: 'memory-level', numRuns: runs.memory, location: () => new MemoryLevel() },
      { name: 'classic-level', numRuns: runs.classic, location: () => newPath('run') },
    ],
    newPath,
  }
}
