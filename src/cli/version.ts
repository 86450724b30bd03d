import { readFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

/**
 * The version in the package's own package.json, read at run time: the
 * nearest package.json above this module, which is the package root both
 * from `dist/cli.js` (one level down) and from `src/cli/*.ts` (two levels,
 * when tests run the source). Reading it keeps the one version number in
 * one place; the build does not have to copy it.
 */
export async function packageVersion(): Promise<string> {
  for (let dir = dirname(fileURLToPath(import.meta.url)); ; dir = dirname(dir)) {
    const text = await readFile(join(dir, 'package.json'), 'utf8').catch(() => undefined)
    if (text !== undefined) {
      const { version } = JSON.parse(text) as { version?: unknown }
      if (typeof version === 'string') return version
    }
    if (dirname(dir) === dir) return 'unknown'
  }
}
