/**
 * One `nats-server` child process of the NATS test harness (./nats-cluster.ts): started with
 * its generated config, its stdout and stderr appended to a log file (a file descriptor, not a
 * pipe, so a chatty server can never block on a full pipe), tracked until it exits, and
 * stopped by its own PID only. Every live child is also remembered (in this process and by a
 * watchdog process) so that a test run that ends without `close()`, or is killed, still
 * SIGKILLs what it started.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { closeSync, existsSync, openSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { delimiter, join } from 'node:path'

/** Where Debian puts the binary; not on a normal user's PATH. */
const DEBIAN_PATH = '/usr/sbin/nats-server'

/** The `nats-server` binary: the first one on PATH, else Debian's /usr/sbin/nats-server, else undefined. */
export function natsServerPath(): string | undefined {
  for (const dir of (process.env['PATH'] ?? '').split(delimiter)) {
    if (dir === '') continue
    const candidate = join(dir, 'nats-server')
    if (existsSync(candidate)) return candidate
  }
  return existsSync(DEBIAN_PATH) ? DEBIAN_PATH : undefined
}

const live = new Set<ChildProcess>()
let watchdog: ChildProcess | undefined

/**
 * A tiny process that outlives its parent: it is told each server's PID as it starts ("+pid")
 * and exits ("-pid"), and SIGKILLs the ones still listed when its stdin ends, which happens
 * however the test process ends, even by SIGKILL (vitest's worker pool ends workers with
 * SIGTERM, then SIGKILL, and neither runs `process.on('exit')`). It ignores the terminal's
 * SIGINT and SIGHUP so that a Ctrl-C still lets it clean up after the test process is gone.
 */
const WATCHDOG_SOURCE = `
const pids = new Set()
let pending = ''
const cleanUp = () => {
  for (const pid of pids) { try { process.kill(pid, 'SIGKILL') } catch {} }
  process.exit(0)
}
process.on('SIGINT', () => {})
process.on('SIGHUP', () => {})
process.stdin.setEncoding('utf8')
process.stdin.on('data', (chunk) => {
  pending += chunk
  let newline
  while ((newline = pending.indexOf('\\n')) >= 0) {
    const line = pending.slice(0, newline)
    pending = pending.slice(newline + 1)
    const pid = Number(line.slice(1))
    if (line[0] === '+') pids.add(pid)
    else pids.delete(pid)
  }
})
process.stdin.on('end', cleanUp)
process.stdin.on('error', cleanUp)
`

function tellWatchdog(line: string): void {
  if (watchdog === undefined) {
    watchdog = spawn(process.execPath, ['-e', WATCHDOG_SOURCE], { stdio: ['pipe', 'ignore', 'ignore'] })
    // Neither the process nor its pipe may keep the test process alive.
    watchdog.unref()
    const stdin = watchdog.stdin as (NodeJS.WritableStream & { unref?: () => void }) | null
    stdin?.unref?.()
    stdin?.on('error', () => {})
    // The fast path for an ordinary exit; the watchdog covers the others.
    process.on('exit', () => {
      for (const child of live) {
        try {
          if (child.pid !== undefined) process.kill(child.pid, 'SIGKILL')
        } catch {
          // already gone
        }
      }
    })
  }
  watchdog.stdin?.write(`${line}\n`)
}

/** A started `nats-server`: its PID and a promise that settles when it has exited. */
export interface NatsProcess {
  readonly pid: number
  /** Resolves once the process has exited (never rejects): the exit code or the signal's name. */
  readonly exited: Promise<number | string>
  /** True until the exit was observed. */
  running(): boolean
  /** Sends a signal to this process's PID, unless it has already exited. */
  signal(signal: NodeJS.Signals): void
}

/** Starts `nats-server -c configFile`, appending its output to logFile. */
export function spawnNatsServer(binary: string, configFile: string, logFile: string): NatsProcess {
  const log = openSync(logFile, 'a')
  let child: ChildProcess
  try {
    child = spawn(binary, ['-c', configFile], { stdio: ['ignore', log, log] })
  } finally {
    // The child holds its own copy of the descriptor.
    closeSync(log)
  }
  const pid = child.pid
  if (pid === undefined) throw new Error(`could not start ${binary}`)
  live.add(child)
  tellWatchdog(`+${pid}`)
  let isRunning = true
  const exited = new Promise<number | string>((resolve) => {
    child.once('exit', (code, signal) => {
      isRunning = false
      live.delete(child)
      tellWatchdog(`-${pid}`)
      resolve(signal ?? code ?? -1)
    })
  })
  return {
    pid,
    exited,
    running: () => isRunning,
    signal(signal) {
      if (!isRunning) return
      try {
        process.kill(pid, signal)
      } catch {
        // exited between the check and the kill
      }
    },
  }
}

/** The last `lines` lines of a log file (without lines matching `skip`), or a note that it could not be read. */
export async function logTail(logFile: string, lines = 25, skip?: RegExp): Promise<string> {
  try {
    const text = await readFile(logFile, 'utf8')
    const all = text.trimEnd().split('\n')
    return (skip === undefined ? all : all.filter((line) => !skip.test(line))).slice(-lines).join('\n')
  } catch (err) {
    return `(no log: ${(err as Error).message})`
  }
}
