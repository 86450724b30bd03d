/** The commit a benchmark's store code came from, for its report. */
import { execFileSync } from 'node:child_process'
import { join } from 'node:path'
import { BENCH_DIR } from './load.js'

/** The commit the store code came from, marked when the work tree had changes under src/. */
export function sourceRevision(): string {
  const git = (...args: string[]): string => execFileSync('git', args, { cwd: join(BENCH_DIR, '..'), encoding: 'utf8' }).trim()
  try {
    const head = git('rev-parse', '--short', 'HEAD')
    return git('status', '--porcelain', '--', 'src').length > 0 ? `${head} + uncommitted changes in src/` : head
  } catch {
    return 'unknown (not a git checkout)'
  }
}
