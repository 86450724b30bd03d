/**
 * What a benchmark's report says of its run: the machine, the nats-server
 * version, other busy processes seen as it started, and the load average
 * (waited for, on a full run, to fall).
 */
import { execFileSync } from 'node:child_process'
import { writeFile } from 'node:fs/promises'
import { cpus, loadavg, release, totalmem, type } from 'node:os'
import { join } from 'node:path'
import { setTimeout as delay } from 'node:timers/promises'
import { BENCH_DIR } from './load.js'

const log = (text: string): void => void process.stderr.write(`${text}\n`)

/** `nats-server <version>` of the binary at `binary`. */
export function natsVersion(binary: string): string {
  try {
    return `nats-server ${execFileSync(binary, ['--version'], { encoding: 'utf8' }).trim().replace(/^nats-server:?\s*/, '')}`
  } catch {
    return 'nats-server (version unknown)'
  }
}

/**
 * Test runners, benches and NATS servers of others running as this starts (a shared machine): their command lines,
 * or "none seen". `self` is the running script's file name, left out.
 */
export function otherBusyProcesses(self: string): string {
  try {
    const lines = execFileSync('ps', ['-eo', 'pid=,pcpu=,args='], { encoding: 'utf8' }).split('\n')
    const busy = lines.filter((line) => /vitest|nats-server|\.bench\.ts|run\.ts/.test(line) && !line.includes(self))
    return busy.length === 0 ? 'none seen' : `${busy.length} (${busy.map((line) => line.trim().split(/\s+/).slice(2).join(' ').slice(0, 60)).join('; ')})`
  } catch {
    return 'unknown'
  }
}

/** Waits (up to `waitMs`) for the 1-minute load average to fall to `limit` or below; says what it found. */
export async function waitForQuiet(limit: number, waitMs: number): Promise<string> {
  const first = loadavg()
  const deadline = Date.now() + waitMs
  let waited = false
  while ((loadavg()[0] ?? 0) > limit && Date.now() < deadline) {
    if (!waited) log(`load average ${first[0]!.toFixed(2)} > ${limit}: waiting up to ${Math.round(waitMs / 60_000)} min for it to fall ...`)
    waited = true
    await delay(10_000)
  }
  const now = loadavg()
  const text = (l: number[]): string => `${l[0]!.toFixed(2)} (1 min), ${l[1]!.toFixed(2)} (5 min), ${l[2]!.toFixed(2)} (15 min)`
  if (!waited) return `load average ${text(now)}`
  return `load average ${text(first)} at first, above ${limit}: waited ${((waitMs - Math.max(0, deadline - Date.now())) / 1000).toFixed(0)} s, then ${text(now)}${(now[0] ?? 0) > limit ? ' (still above: measured anyway)' : ''}`
}

/** The load as a run starts: waited for (up to `waitMs`, to `limit`) on a full run; a quick run is a smoke test. */
export async function loadAtStart(quick: boolean, limit: number, waitMs: number): Promise<string> {
  return quick ? `load average ${loadavg().map((l) => l.toFixed(2)).join(', ')} (1, 5, 15 min; not waited for: --quick)` : waitForQuiet(limit, waitMs)
}

/** What a cluster bench's report says of its run, as markdown list lines. */
export interface RunFacts {
  /** The script's file name, as run from bench/. */
  readonly script: string
  readonly quick: boolean
  readonly startedAt: number
  /** The nats-server binary. */
  readonly binary: string
  /** The source revision, as the modules were loaded. */
  readonly source: string
  /** {@link loadAtStart}'s answer. */
  readonly load: string
  /** {@link otherBusyProcesses}'s answer. */
  readonly busy: string
}

/** The report's list of the run's date, command, machine, source and load. */
export function runFactLines(facts: RunFacts): string[] {
  const cpu = cpus()
  const argv = process.argv.slice(2)
  return [
    `- date: ${new Date(facts.startedAt).toISOString().slice(0, 16).replace('T', ' ')} UTC; ${facts.quick ? 'quick smoke run (not for conclusions)' : 'full run'}; run took ${((Date.now() - facts.startedAt) / 1000).toFixed(0)} s`,
    `- command: \`node --import tsx ${facts.script}${argv.length > 0 ? ` ${argv.join(' ')}` : ''}\` (in bench/)`,
    `- machine: ${cpu.length} cores (${cpu[0]?.model ?? '?'}), ${(totalmem() / 2 ** 30).toFixed(0)} GiB RAM, ${type()} ${release()}; Node ${process.version}; ${natsVersion(facts.binary)}`,
    `- source: ${facts.source} (as loaded when the run started)`,
    `- machine load when measuring started: ${facts.load}; other processes running then: ${facts.busy}; 1-min load at the end: ${loadavg()[0]?.toFixed(2)}`,
  ]
}

/**
 * Prints a report on stdout and writes it to `out`, or, on a full run without `out`, to `results/<name>`; a quick
 * run's report is written only where `out` says.
 */
export async function writeReport(markdown: string, options: { readonly out: string | undefined; readonly quick: boolean; readonly name: string }): Promise<void> {
  const out = options.out ?? (options.quick ? undefined : join(BENCH_DIR, 'results', options.name))
  if (out !== undefined) {
    await writeFile(out, `${markdown}\n`)
    log(`written to ${out}`)
  }
  process.stdout.write(`${markdown}\n`)
}

/** Runs a bench's `main`, ending the process with its error's stack and status 1 when it fails. */
export function runMain(main: () => Promise<void>): void {
  main().catch((err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`)
    process.exit(1)
  })
}
