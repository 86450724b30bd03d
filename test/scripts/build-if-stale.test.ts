/** `npm start` builds only when dist/ is missing or older than its inputs (issue 23, point 7). */
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { BUILD_INPUTS, STAMP, staleReason } from '../../scripts/build-if-stale.mjs'

const packageJson = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { scripts: Record<string, string> }

describe('staleReason', () => {
  const inputs = [
    { path: 'src/index.ts', mtimeMs: 1_000 },
    { path: 'src/cli', mtimeMs: 2_000 },
    { path: 'package.json', mtimeMs: 500 },
  ]

  it('builds when no build finished (no stamp: a fresh clone, or a build stopped halfway)', () => {
    expect(staleReason(undefined, inputs)).toBe('no finished build in dist/')
    expect(staleReason(Number.NaN, inputs)).toBe('no finished build in dist/')
  })

  it('builds when an input (file or directory: a deleted file changes it) changed after the build started', () => {
    expect(staleReason(1_500, inputs)).toBe('src/cli changed after the last build')
    // Changed during the build: the build may have read the old content.
    expect(staleReason(2_000, inputs)).toBe('src/cli changed after the last build')
  })

  it('does not build when every input is older than the build', () => {
    expect(staleReason(2_001, inputs)).toBeUndefined()
    expect(staleReason(1, [])).toBeUndefined()
  })

  it('npm start runs it first, over the inputs tsup reads, with its stamp inside dist/', () => {
    expect(packageJson.scripts.prestart).toBe('node scripts/build-if-stale.mjs')
    expect(BUILD_INPUTS).toEqual(expect.arrayContaining(['src', 'package.json', 'tsup.config.ts']))
    expect(STAMP.startsWith('dist/')).toBe(true)
  })
})
