/**
 * Real child processes for the reliability tests: a child entry written in
 * TypeScript (importing src/ directly) is bundled once per test file with
 * esbuild (which vitest already brings) into a CommonJS file in a temporary
 * directory, and run with `process.execPath`. The runtime dependencies stay
 * outside the bundle (classic-level loads a native addon from its own
 * folder) and are required by absolute path, so the bundle can live under
 * os.tmpdir() and still find them.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'
import { expect } from 'vitest'

const root = fileURLToPath(new URL('../..', import.meta.url))
const requireFromRoot = createRequire(join(root, 'package.json'))
const EXTERNAL = /^(classic-level|abstract-level|msgpackr|memory-level)(\/.*)?$/

export interface ChildBundle {
  /** The bundled entry, runnable with `node file`. */
  readonly file: string
  /** Removes the bundle's temporary directory. */
  cleanup(): Promise<void>
}

/** Bundles a child entry (a path relative to this folder) into a runnable CommonJS file under os.tmpdir(). */
export async function bundleChild(entry: string): Promise<ChildBundle> {
  const dir = await mkdtemp(join(tmpdir(), 'price-store-child-'))
  const file = join(dir, 'child.cjs')
  try {
    await build({
      entryPoints: [fileURLToPath(new URL(entry, import.meta.url))],
      outfile: file,
      bundle: true,
      format: 'cjs',
      platform: 'node',
      target: 'node20',
      logLevel: 'silent',
      plugins: [
        {
          name: 'dependencies-by-absolute-path',
          setup(builder) {
            builder.onResolve({ filter: EXTERNAL }, (args) => ({ path: requireFromRoot.resolve(args.path), external: true }))
          },
        },
      ],
    })
  } catch (err) {
    await rm(dir, { recursive: true, force: true })
    throw err
  }
  return { file, cleanup: () => rm(dir, { recursive: true, force: true }) }
}

export interface RunningChild {
  readonly child: ChildProcess
  readonly pid: number
  /** Complete stdout lines received so far. */
  lines(): readonly string[]
  stderr(): string
  /** Resolves once a stdout line matches, with the match; rejects if the child ends first. */
  waitForLine(pattern: RegExp): Promise<RegExpMatchArray>
  /** Resolves after the child has exited and its output is fully read: the exit code, or the signal's name. */
  readonly ended: Promise<number | string>
  /** Writes a line to the child's stdin. */
  send(line: string): void
  /** Sends SIGKILL to this child (by its PID) unless it has already ended. */
  kill(): void
}

/** Runs a bundled child with arguments; stdout is read line by line. */
export function startChild(bundle: ChildBundle, args: readonly string[]): RunningChild {
  const child = spawn(process.execPath, [bundle.file, ...args], { stdio: ['pipe', 'pipe', 'pipe'] })
  if (child.pid === undefined) throw new Error('the child process did not start')
  const pid = child.pid
  const lines: string[] = []
  let partial = ''
  let err = ''
  let done = false
  const watchers = new Set<() => void>()
  const notify = (): void => {
    for (const watcher of [...watchers]) watcher()
  }
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    const parts = (partial + chunk).split('\n')
    partial = parts.pop() ?? ''
    lines.push(...parts)
    notify()
  })
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    err += chunk
  })
  // The child may be killed while we write to it.
  child.stdin!.on('error', () => {})
  const ended = new Promise<number | string>((resolve) => {
    child.on('close', (code, signal) => {
      if (partial !== '') lines.push(partial)
      partial = ''
      done = true
      notify()
      resolve(signal ?? code ?? -1)
    })
  })
  return {
    child,
    pid,
    lines: () => lines,
    stderr: () => err,
    ended,
    waitForLine(pattern) {
      return new Promise((resolve, reject) => {
        let seen = 0
        const check = (): void => {
          for (; seen < lines.length; seen++) {
            const match = pattern.exec(lines[seen] as string)
            if (match !== null) {
              watchers.delete(check)
              resolve(match)
              return
            }
          }
          if (done) {
            watchers.delete(check)
            reject(new Error(`the child ended before printing ${pattern}; stderr: ${err}`))
          }
        }
        watchers.add(check)
        check()
      })
    },
    send(line) {
      if (!done) child.stdin!.write(`${line}\n`)
    },
    kill() {
      if (!done && child.exitCode === null && child.signalCode === null) process.kill(pid, 'SIGKILL')
    },
  }
}

/**
 * After `kill()`: checks the writer died by SIGKILL (not on its own) and
 * printed `ACK n` lines in order from `first`, and returns the last one
 * (`undefined` when none). Output printed before the kill is still in the
 * pipe and has been read once `ended` settles.
 */
export async function lastAckAfterKill(running: RunningChild, first: number): Promise<number | undefined> {
  const ended = await running.ended
  expect(ended, `the writer should die by SIGKILL, not on its own; stderr: ${running.stderr()}`).toBe('SIGKILL')
  let lastAck: number | undefined
  for (const line of running.lines()) {
    const match = /^ACK (\d+)$/.exec(line)
    if (match === null) continue
    const n = Number(match[1])
    expect(n, 'ACKs come in order').toBe(lastAck === undefined ? first : lastAck + 1)
    lastAck = n
  }
  return lastAck
}
