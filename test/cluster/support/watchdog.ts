/**
 * The safety net of the processes the cluster tests start (nats-servers, price-store nodes): each is
 * remembered, in this process and by a watchdog process, until it exits, so a test run that ends
 * without stopping them, or is killed, leaves none behind.
 */
import { spawn, type ChildProcess } from 'node:child_process'

const live = new Set<ChildProcess>()
let watchdog: ChildProcess | undefined

/**
 * A tiny process that outlives its parent: it is told each child's PID as it starts ("+pid")
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

/** Remembers a started child until it exits: SIGKILLed if the test process ends first. */
export function watchChild(child: ChildProcess): void {
  const pid = child.pid
  if (pid === undefined) return
  live.add(child)
  tellWatchdog(`+${pid}`)
  child.once('exit', () => {
    live.delete(child)
    tellWatchdog(`-${pid}`)
  })
}
