/**
 * One benchmark process (`run.ts` or `profile.ts`) at a time per checkout.
 * Two sharing `bench/.data` would skew each other's timings, and worse: the
 * floor makes its twin of a store by hard-linking the store's table files,
 * which is only safe while no process has that store open. A process that
 * opens it may compact, and a table file linked while LevelDB still writes
 * it can read back as `Corruption: bad block type`. LevelDB's own lock
 * cannot guard this, since the twin is made without opening the store.
 */
import { rmSync } from 'node:fs'
import { mkdir, open, readFile, rm } from 'node:fs/promises'
import { join } from 'node:path'

const LOCK_NAME = 'run.lock'

/** Whether a process with this pid is running (EPERM: it is, and not ours). */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return (err as { code?: string }).code === 'EPERM'
  }
}

/**
 * Takes the run lock of `dataDir` (made if missing) until this process exits.
 * A lock left by a run that died (its pid no longer runs: a crash, Ctrl+C) is
 * taken over; one held by a running process is an error naming it.
 */
export async function holdRunLock(dataDir: string): Promise<void> {
  const path = join(dataDir, LOCK_NAME)
  await mkdir(dataDir, { recursive: true })
  for (let attempt = 0; ; attempt++) {
    try {
      const handle = await open(path, 'wx')
      await handle.writeFile(`${process.pid}\n`)
      await handle.close()
      process.once('exit', () => rmSync(path, { force: true }))
      return
    } catch (err) {
      if ((err as { code?: string }).code !== 'EEXIST' || attempt > 0) throw err
    }
    const holder = Number.parseInt(await readFile(path, 'utf8').catch(() => ''), 10)
    if (Number.isInteger(holder) && holder > 0 && holder !== process.pid && running(holder)) {
      throw new Error(`another benchmark run (pid ${holder}) is using ${dataDir}; wait for it to finish or stop it (if no benchmark is running, delete ${path})`)
    }
    await rm(path, { force: true })
  }
}
