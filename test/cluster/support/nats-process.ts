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
import { watchChild } from './watchdog.js'

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
  watchChild(child)
  let isRunning = true
  const exited = new Promise<number | string>((resolve) => {
    child.once('exit', (code, signal) => {
      isRunning = false
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
