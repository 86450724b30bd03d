import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Readable, Writable } from 'node:stream'
import { ClassicLevel } from 'classic-level'
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest'
import type { CliIo } from '../../src/cli/io.js'
import { DEFAULT_PROVIDER } from '../../src/cli/config.js'
import { runCli } from '../../src/cli/run-cli.js'
import { PriceStore } from '../../src/index.js'

/** Captured streams and a fake shutdown signal for running the CLI in-process. */
export interface MemoryIo {
  readonly io: CliIo
  stdout(): string
  stderr(): string
  /** Sends the shutdown signal, as SIGINT/SIGTERM would. */
  signal(name?: string): void
  /** Resolves once stdout matches `pattern`. */
  waitForStdout(pattern: RegExp): Promise<RegExpMatchArray>
  /** Resolves once stderr matches `pattern`. */
  waitForStderr(pattern: RegExp): Promise<RegExpMatchArray>
}

/** What {@link memoryIo} reads as standard input and whether it passes for a terminal. */
export interface MemoryIoOptions {
  /** The text of standard input, or a stream to feed it from. */
  readonly stdin?: string | Readable
  readonly isTTY?: boolean
}

/** A {@link CliIo} over memory: `stdin` is the given text or stream. */
export function memoryIo(options: MemoryIoOptions = {}): MemoryIo {
  let out = ''
  let err = ''
  const watchers: (() => void)[] = []
  const sink = (append: (text: string) => void): Writable =>
    new Writable({
      write(chunk: Buffer | string, _encoding, callback) {
        append(chunk.toString())
        for (const watcher of watchers) watcher()
        callback()
      },
    })
  const waitFor = (text: () => string, pattern: RegExp): Promise<RegExpMatchArray> =>
    new Promise((resolve) => {
      const check = (): boolean => {
        const match = pattern.exec(text())
        if (match !== null) resolve(match)
        return match !== null
      }
      if (!check()) watchers.push(check)
    })
  let shutdown: ((signal: string) => void) | undefined
  const io: CliIo = {
    stdout: sink((text) => (out += text)),
    stderr: sink((text) => (err += text)),
    stdin: options.stdin instanceof Readable ? options.stdin : Readable.from(options.stdin === undefined ? [] : [options.stdin]),
    isTTY: options.isTTY ?? false,
    onShutdown(handler) {
      shutdown = handler
      return () => {
        shutdown = undefined
      }
    },
  }
  return {
    io,
    stdout: () => out,
    stderr: () => err,
    signal(name = 'SIGTERM') {
      if (shutdown === undefined) throw new Error('nothing is waiting for a shutdown signal')
      shutdown(name)
    },
    waitForStdout: (pattern) => waitFor(() => out, pattern),
    waitForStderr: (pattern) => waitFor(() => err, pattern),
  }
}

/** Runs the CLI in-process; resolves with the exit code and what it wrote. */
export async function run(argv: readonly string[], options: MemoryIoOptions = {}) {
  const memory = memoryIo(options)
  const code = await runCli(argv, memory.io)
  return { code, stdout: memory.stdout(), stderr: memory.stderr() }
}

/** Starts `serve --port 0 ARGS` in-process; resolves once it printed its banner, with its endpoint and example URLs. */
export async function startServe(args: readonly string[]) {
  const memory = memoryIo()
  const exit = runCli(['serve', '--port', '0', ...args], memory.io)
  // With --access-log, standard output is the log's alone: the banner goes to standard error.
  const toStderr = args.includes('--access-log')
  const banner = await Promise.race([
    toStderr
      ? memory.waitForStderr(/Press Ctrl\+C to stop\.\n/).then(() => memory.stderr())
      : memory.waitForStdout(/Press Ctrl\+C to stop\.\n/).then(() => memory.stdout()),
    exit.then((code) => {
      throw new Error(`serve exited with ${code}: ${memory.stderr()}`)
    }),
  ])
  const endpoint = /^ {2}(http:\/\/\S+\/prices)$/m.exec(banner)![1]!
  const examples = [...banner.matchAll(/curl '([^']+)'/g)].map((match) => match[1]!)
  return { memory, exit, banner, endpoint, examples }
}

/**
 * Gives each test of the calling file a fresh temporary directory and a
 * database path inside it (`DIR/db`, not created), removed after the test.
 */
export function eachTempDb(use: (dir: string, db: string) => void): void {
  let cleanup: (() => Promise<void>) | undefined
  beforeEach(async () => {
    const temp = await tempDir()
    cleanup = temp.cleanup
    use(temp.dir, join(temp.dir, 'db'))
  })
  afterEach(async () => {
    await cleanup?.()
  })
}

/**
 * Gives the calling file one temporary directory with a demo database
 * (`DIR/db`, 0.05 days: 432 records of each of the 20 demo tokens, over 72
 * minutes), written before its first test and removed after its last.
 */
export function demoDbForFile(use: (dir: string, db: string) => void): void {
  let cleanup: (() => Promise<void>) | undefined
  beforeAll(async () => {
    const temp = await tempDir()
    cleanup = temp.cleanup
    const db = join(temp.dir, 'db')
    const demo = await run(['demo', '--db', db, '--days', '0.05'])
    if (demo.code !== 0) throw new Error(`demo failed: ${demo.stderr}`)
    use(temp.dir, db)
  })
  afterAll(async () => {
    await cleanup?.()
  })
}

/** A fresh temporary directory; `cleanup()` removes it. */
export async function tempDir(): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'price-store-cli-'))
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) }
}

/** A valid record for the default provider. */
export function record(symbol: string, timestamp: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: `${symbol}-${timestamp}`,
    symbol,
    provider: DEFAULT_PROVIDER.id,
    value: 100 + timestamp,
    signature: 'c2lnbmF0dXJl',
    permawebTx: 'tx',
    version: '0.4',
    source: { binance: 100 + timestamp },
    timestamp,
    ...extra,
  }
}

/** Every stored record's id per symbol in the store at `db`, sorted, read back with a fresh store (closed again). */
export async function storedIds(db: string): Promise<Record<string, string[]>> {
  const store = await PriceStore.open(db, { provider: DEFAULT_PROVIDER })
  try {
    const result: Record<string, string[]> = {}
    for (const symbol of await store.symbols()) {
      result[symbol] = (await store.latest(symbol, { limit: 3000 })).map((r) => r.id).sort()
    }
    return result
  } finally {
    await store.close()
  }
}

/** The records as NDJSON lines. */
export const ndjson = (records: readonly unknown[]): string[] => records.map((r) => JSON.stringify(r))

/** Writes `lines` joined by "\n" to `dir/name` and returns the path. */
export async function writeLines(dir: string, name: string, lines: readonly string[]): Promise<string> {
  const path = join(dir, name)
  await writeFile(path, `${lines.join('\n')}\n`)
  return path
}

/** Marks a store directory (closed) as being of another format, as an older release would have left it. */
export async function setStoredFormat(location: string, format: string): Promise<void> {
  const db = new ClassicLevel(location)
  try {
    await db.sublevel<string, string>('m', { keyEncoding: 'utf8', valueEncoding: 'utf8' }).put('format', format)
  } finally {
    await db.close()
  }
}

/** Every key and value a store directory holds (closed), read without the store: to show nothing changed. */
export async function rawContents(location: string): Promise<string[]> {
  const db = new ClassicLevel<Uint8Array, Uint8Array>(location, { keyEncoding: 'view', valueEncoding: 'view', createIfMissing: false })
  try {
    return (await db.iterator().all()).map(([key, value]) => `${Buffer.from(key).toString('hex')}=${Buffer.from(value).toString('hex')}`)
  } finally {
    await db.close()
  }
}
