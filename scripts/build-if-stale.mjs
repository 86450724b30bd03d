// `npm start`'s prestart: builds dist/ only when it is missing or older than what it is built from, so a restart
// starts at once, and a `git pull` (or an edit) that changes src/ still rebuilds. A successful build leaves
// dist/.build-stamp holding the time the build started; anything changed after that time is newer than dist/.
// Deleting a file counts too: it changes its directory's time. The decision is `staleReason`, a pure function
// (test/scripts/build-if-stale.test.ts).
import { spawnSync } from 'node:child_process'
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'

/** What dist/ is built from: every file and directory under these, and these files. */
export const BUILD_INPUTS = ['src', 'package.json', 'package-lock.json', 'tsup.config.ts', 'tsconfig.json']
/** Where the stamp of the last successful build is kept (tsup empties dist/ when a build starts). */
export const STAMP = 'dist/.build-stamp'

/**
 * Why dist/ must be built again, or `undefined` when it is up to date.
 * @param {number | undefined} builtAt when the last successful build started (ms), `undefined` without one
 * @param {ReadonlyArray<{ path: string, mtimeMs: number }>} inputs the build's inputs and their modification times
 * @returns {string | undefined}
 */
export function staleReason(builtAt, inputs) {
  if (builtAt === undefined || !Number.isFinite(builtAt)) return 'no finished build in dist/'
  let newest
  for (const input of inputs) if (newest === undefined || input.mtimeMs > newest.mtimeMs) newest = input
  if (newest !== undefined && newest.mtimeMs >= builtAt) return `${newest.path} changed after the last build`
  return undefined
}

/** Every input file and directory under `roots` (missing ones skipped), with its modification time. */
function listInputs(root, roots) {
  const found = []
  const visit = (path) => {
    let stats
    try {
      stats = statSync(join(root, path))
    } catch {
      return
    }
    found.push({ path, mtimeMs: stats.mtimeMs })
    if (stats.isDirectory()) for (const name of readdirSync(join(root, path))) visit(join(path, name))
  }
  for (const path of roots) visit(path)
  return found
}

function readStamp(root) {
  try {
    return Number(readFileSync(join(root, STAMP), 'utf8'))
  } catch {
    return undefined
  }
}

function main() {
  const root = process.cwd()
  const reason = staleReason(readStamp(root), listInputs(root, BUILD_INPUTS))
  if (reason === undefined) {
    console.error('dist/ is up to date (npm run build rebuilds it anyway)')
    return 0
  }
  console.error(`building dist/: ${reason}`)
  const startedAt = Date.now()
  const build = spawnSync('npm', ['run', 'build'], { cwd: root, stdio: 'inherit', shell: process.platform === 'win32' })
  if (build.status !== 0) return build.status ?? 1
  writeFileSync(join(root, STAMP), String(startedAt))
  return 0
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) process.exitCode = main()
