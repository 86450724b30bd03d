/**
 * The real bin in real processes: built from source with tsup (about a
 * second, no type declarations) next to node_modules so its imports resolve,
 * then run as `node cli.js ...` the way `npm start` runs dist/cli.js.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdir, mkdtemp, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'tsup'
import { afterAll, beforeAll } from 'vitest'

const root = fileURLToPath(new URL('../..', import.meta.url))

/** A child process of the bin, with what it has written so far. */
export interface Running {
  readonly child: ChildProcess
  stdout(): string
  stderr(): string
  /** Resolves with the exit code (or the signal's name if killed). */
  readonly exited: Promise<number | string>
}

/**
 * Builds the bin once for the calling test file (removed after it) and
 * gives a function that starts it with `args` in the directory `cwd()`.
 */
export function useBuiltCli(cwd: () => string): (args: readonly string[], options?: { stdin?: 'ignore' | 'pipe' }) => Running {
  let buildDir: string | undefined
  let cli = ''
  beforeAll(async () => {
    await mkdir(join(root, 'node_modules', '.cache'), { recursive: true })
    buildDir = await mkdtemp(join(root, 'node_modules', '.cache', 'price-store-cli-'))
    await build({
      entry: { cli: join(root, 'src/cli/main.ts') },
      format: ['esm'],
      outDir: buildDir,
      platform: 'node',
      target: 'node20',
      dts: false,
      sourcemap: false,
      config: false,
      silent: true,
    })
    cli = join(buildDir, 'cli.js')
  })
  afterAll(async () => {
    if (buildDir !== undefined) await rm(buildDir, { recursive: true, force: true })
  })
  return (args, { stdin = 'ignore' } = {}) => {
    const child = spawn(process.execPath, [cli, ...args], { cwd: cwd(), stdio: [stdin, 'pipe', 'pipe'] })
    let out = ''
    let err = ''
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk
    })
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
      err += chunk
    })
    const exited = new Promise<number | string>((resolve) => {
      child.on('exit', (code, signal) => resolve(code ?? signal ?? 'unknown'))
    })
    return { child, stdout: () => out, stderr: () => err, exited }
  }
}
