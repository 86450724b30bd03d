/**
 * Real NATS JetStream servers for tests: `startNatsCluster({ size: 3 })` starts three
 * `nats-server` processes clustered with JetStream (or one, unclustered, with `size: 1`), each
 * with a generated config in a temporary folder (`<tmp>/n<i>/server.conf`, its JetStream store
 * in `<tmp>/n<i>/js`, its output in `<tmp>/n<i>/server.log`), listening on 127.0.0.1 only, on
 * free ports the harness chooses (client, route and HTTP monitoring port per server).
 *
 * Readiness is observed, never slept for: every running server's `/healthz` answers 200 (which
 * in nats-server 2.9 also means JetStream reached the meta leader and its streams are current)
 * and, clustered, every running server's `/jsz` names the same meta leader, one of the running
 * servers. Deadlines only bound a failure, which then throws with the servers' log tails.
 *
 * Timing: a fresh cluster is ready in well under a second, but nats-server's RAFT waits 4-9 s
 * (hard-coded) before electing a new leader, so losing a leader (kill) or restarting everything
 * (startAll: the meta leader, then each stream's leader) takes seconds: 4-18 s for `startAll`
 * measured on 2 busy cores. Clients should retry with short request timeouts meanwhile.
 *
 * Processes are stopped by their own PID only; `close()` (call it in `afterAll`) kills what is
 * left and removes the folder. A watchdog process (./nats-process.ts) SIGKILLs any server a
 * test process leaves behind, even one killed by vitest's worker pool; the folder then stays.
 *
 * Tests that need the binary skip without it:
 * `describe.skipIf(!natsServerPath())(`... ${NATS_SKIP_REASON}`, ...)`. `.ci/install-nats`
 * installs Debian's package in CI.
 */
import { randomBytes } from 'node:crypto'
import { appendFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as delay } from 'node:timers/promises'
import { chooseNatsPorts, makeTestCertificates, natsServerConfig, type NatsPorts, type TestCertificates } from './nats-config.js'
import { logTail, natsServerPath, spawnNatsServer, type NatsProcess } from './nats-process.js'

export { natsServerPath } from './nats-process.js'

/** Why the NATS tests are skipped when `natsServerPath()` finds nothing; for a describe title. */
export const NATS_SKIP_REASON =
  'skipped: nats-server not found on PATH nor at /usr/sbin/nats-server (install Debian\'s nats-server, as .ci/install-nats does)'

/**
 * How long readiness and exits may take before the harness gives up with the logs. Only a
 * failure waits this long. Generous because nats-server's RAFT waits 4-9 s (hard-coded) before
 * campaigning: a full restart elects the meta leader and then each stream's leader, and a split
 * vote costs another round (measured here: 4-18 s for a full restart of 3 servers).
 */
const DEFAULT_READY_TIMEOUT_MS = 45_000
const POLL_INTERVAL_MS = 100
const PROBE_TIMEOUT_MS = 2_000
/** Marks where each start of a server begins in its log, to read only that start's lines. */
const START_MARKER = '--- nats-cluster harness: starting server ---'
const ADDRESS_IN_USE = /address already in use/i
/** Signals after which a process does not exit, so kill() would wait for nothing. */
const NOT_FATAL: ReadonlySet<NodeJS.Signals> = new Set<NodeJS.Signals>([
  'SIGSTOP', 'SIGCONT', 'SIGTSTP', 'SIGTTIN', 'SIGTTOU', 'SIGWINCH', 'SIGCHLD', 'SIGURG',
  // nats-server: reload config, reopen log, lame-duck mode (exits only minutes later).
  'SIGHUP', 'SIGUSR1', 'SIGUSR2',
])

/** Options of {@link startNatsCluster}. */
export interface NatsClusterOptions {
  /** 1: one server, JetStream unclustered (R1 streams). 3: a JetStream cluster (R3 streams survive one loss). */
  readonly size: 1 | 3
  /** Prefix of the cluster's name and its temp folder (a random suffix keeps it unique). */
  readonly name?: string
  /** Bound on every wait for readiness or exit, in ms (default 45 s); only a failure waits this long. */
  readonly readyTimeoutMs?: number
  /** The servers' `max_payload` in bytes (nats-server's default is 1 MB). */
  readonly maxPayload?: number
  /** An `authorization { ... }` block for every server's config, as is (users, permissions). */
  readonly authorization?: string
  /**
   * TLS for clients and routes, with certificates made by `openssl` into the temp folder ({@link NatsCluster.certificates});
   * `verifyClients`: clients must show a certificate the test CA signed.
   */
  readonly tls?: { readonly verifyClients: boolean }
  /**
   * Clustered servers do not tell clients each other's addresses: a client given one URL (a proxy's, to cut it off)
   * does not reconnect to the others behind the test's back.
   */
  readonly noAdvertise?: boolean
  /**
   * Routes through the test's hands (./nats-route-proxies.ts): server `from` dials server `to`'s route `port` at the
   * port `via` returns (a proxy's), and every server advertises `advertise` to the others instead of its own route
   * address, so that no server reaches another round those ports.
   */
  readonly routes?: { readonly via: (from: number, to: number, port: number) => Promise<number>; readonly advertise: string }
}

/** A running set of NATS servers; server indexes go from 0 to size - 1. */
export interface NatsCluster {
  /** `nats://127.0.0.1:<port>` of each server, by index. */
  readonly urls: readonly string[]
  readonly size: number
  /** The cluster's name (unique per harness). */
  readonly name: string
  /** The temporary folder holding configs, stores and logs. */
  readonly dir: string
  /** The certificates of a cluster started with `tls` (in `dir`), else undefined. */
  readonly certificates: TestCertificates | undefined
  /** The `server_name` of server i (`n<i>`), as /jsz reports leaders. */
  serverName(i: number): string
  /** `http://127.0.0.1:<port>` of server i's monitoring endpoint (`/healthz`, `/jsz`, `/varz`). */
  monitorUrl(i: number): string
  /** The PID of server i while it runs, else undefined. */
  pid(i: number): number | undefined
  /**
   * Sends `signal` (default SIGKILL; SIGTERM for a graceful stop) to server i and resolves when
   * the process has exited. Signals that do not end a process (SIGSTOP, SIGHUP, ...) are refused
   * with a RangeError: use pause/resume.
   */
  kill(i: number, signal?: NodeJS.Signals): Promise<void>
  /** SIGSTOP server i (it stays a process, unresponsive, until `resume`). */
  pause(i: number): void
  /** SIGCONT server i after `pause`. */
  resume(i: number): void
  /** (Re)starts server i with the same config and store; resolves when every running server is ready. */
  start(i: number): Promise<void>
  /** SIGTERMs every running server and waits for them to exit; their data is kept. */
  stopAll(): Promise<void>
  /** Starts every stopped server at once and waits until all are ready (a meta leader elected). */
  startAll(): Promise<void>
  /**
   * Resolves when every running server (paused ones aside) answers /healthz with 200 and,
   * clustered, all of them name the same meta leader, one of themselves. Throws, with the log
   * tails, if a server the harness started exits on its own or the deadline passes.
   */
  waitReady(): Promise<void>
  /** The last lines of server i's log (stdout and stderr; without the harness's own failed health probes), for assertion messages. */
  logTail(i: number, lines?: number): Promise<string>
  /** Kills every server still running and removes the temporary folder (kept when NATS_HARNESS_KEEP is set, for debugging). Safe to call twice. */
  close(): Promise<void>
}

interface Slot {
  readonly index: number
  readonly name: string
  readonly dir: string
  readonly configFile: string
  readonly logFile: string
  ports: NatsPorts
  process: NatsProcess | undefined
  paused: boolean
}

/** Starts `size` nats-server processes with JetStream and resolves once they are ready. */
export async function startNatsCluster(options: NatsClusterOptions): Promise<NatsCluster> {
  const binary = natsServerPath()
  if (binary === undefined) throw new Error(NATS_SKIP_REASON)
  const prefix = (options.name ?? 'price-store').replace(/[^A-Za-z0-9_-]/g, '-')
  const clusterName = `${prefix}-${randomBytes(4).toString('hex')}`
  const timeoutMs = options.readyTimeoutMs ?? DEFAULT_READY_TIMEOUT_MS
  const dir = await mkdtemp(join(tmpdir(), `${prefix}-nats-`))
  let certificates: TestCertificates | undefined
  const slots: Slot[] = []
  for (let index = 0; index < options.size; index++) {
    const slotDir = join(dir, `n${index}`)
    await mkdir(slotDir, { recursive: true })
    slots.push({
      index,
      name: `n${index}`,
      dir: slotDir,
      configFile: join(slotDir, 'server.conf'),
      logFile: join(slotDir, 'server.log'),
      ports: { client: 0, cluster: 0, http: 0 },
      process: undefined,
      paused: false,
    })
  }

  async function writeConfigs(): Promise<void> {
    const ports = await chooseNatsPorts(slots.length)
    for (const slot of slots) slot.ports = ports[slot.index]!
    for (const slot of slots) {
      const peers = slots.filter((s) => s !== slot)
      const peerRoutePorts = await Promise.all(peers.map((s) => options.routes?.via(slot.index, s.index, s.ports.cluster) ?? s.ports.cluster))
      const text = natsServerConfig({
        serverName: slot.name,
        storeDir: join(slot.dir, 'js'),
        ports: slot.ports,
        ...(options.maxPayload !== undefined ? { maxPayload: options.maxPayload } : {}),
        ...(options.authorization !== undefined ? { authorization: options.authorization } : {}),
        ...(certificates !== undefined && options.tls !== undefined
          ? { tls: { certFile: certificates.serverCertFile, keyFile: certificates.serverKeyFile, caFile: certificates.caFile, verifyClients: options.tls.verifyClients } }
          : {}),
        ...(slots.length > 1
          ? { cluster: { name: clusterName, peerRoutePorts, noAdvertise: options.noAdvertise === true, ...(options.routes === undefined ? {} : { advertise: options.routes.advertise }) } }
          : {}),
      })
      await writeFile(slot.configFile, text)
    }
  }

  async function spawn(slot: Slot): Promise<void> {
    if (slot.process?.running()) throw new Error(`nats server ${slot.name} is already running (pid ${slot.process.pid})`)
    await appendFile(slot.logFile, `${START_MARKER}\n`)
    slot.process = spawnNatsServer(binary!, slot.configFile, slot.logFile)
    slot.paused = false
  }

  /** This start's lines of the log only (after the last marker). */
  async function currentLog(slot: Slot): Promise<string> {
    const text = await readFile(slot.logFile, 'utf8').catch(() => '')
    return text.slice(text.lastIndexOf(START_MARKER))
  }

  /** Servers readiness is about: running and not paused (a paused one cannot answer). */
  function answering(): Slot[] {
    return slots.filter((slot) => slot.process?.running() === true && !slot.paused)
  }

  async function describeAll(statuses: ReadonlyMap<number, string>): Promise<string> {
    const parts = await Promise.all(
      slots.map(async (slot) => {
        const state = slot.process === undefined ? 'never started' : slot.process.running() ? `pid ${slot.process.pid}` : 'stopped'
        // Each failed probe logs a "Healthcheck failed" warning; the status already says the last one.
        return `--- ${slot.name} (${state}; ${statuses.get(slot.index) ?? 'not probed'}) log tail:\n${await logTail(slot.logFile, 25, /Healthcheck failed/)}`
      }),
    )
    return parts.join('\n')
  }

  /** One probe of server `slot`: undefined when ready, else why not. */
  async function probe(slot: Slot, runningNames: ReadonlySet<string>): Promise<string | undefined> {
    const base = `http://127.0.0.1:${slot.ports.http}`
    try {
      const health = await fetch(`${base}/healthz`, { signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) })
      const body = await health.text()
      if (health.status !== 200) return `/healthz ${health.status} ${body.trim()}`
      if (slots.length === 1) return undefined
      const jsz = await fetch(`${base}/jsz`, { signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) })
      const info = (await jsz.json()) as { meta_cluster?: { leader?: string } }
      const leader = info.meta_cluster?.leader
      if (leader === undefined || leader === '') return '/jsz: no meta leader'
      if (!runningNames.has(leader)) return `/jsz: meta leader ${leader} is not running`
      return `leader=${leader}`
    } catch (err) {
      return `probe failed: ${(err as Error).message}`
    }
  }

  async function waitReady(): Promise<void> {
    const deadline = Date.now() + timeoutMs
    const statuses = new Map<number, string>()
    for (;;) {
      const crashed = slots.filter((slot) => expectedRunning.has(slot.index) && !slot.process?.running())
      if (crashed.length > 0) {
        throw new Error(`nats server ${crashed.map((s) => s.name).join(', ')} exited on its own\n${await describeAll(statuses)}`)
      }
      const up = answering()
      const names = new Set(up.map((slot) => slot.name))
      const results = await Promise.all(up.map(async (slot) => [slot, await probe(slot, names)] as const))
      statuses.clear()
      for (const [slot, status] of results) statuses.set(slot.index, status ?? 'ready')
      const leaders = new Set(results.map(([, status]) => status).filter((s) => s?.startsWith('leader=')))
      const allReady = results.every(([, status]) => status === undefined || status.startsWith('leader='))
      if (allReady && leaders.size <= 1) return
      if (Date.now() > deadline) {
        throw new Error(`nats servers not ready after ${timeoutMs} ms\n${await describeAll(statuses)}`)
      }
      await delay(POLL_INTERVAL_MS)
    }
  }

  /** Servers the harness started and did not stop on purpose: an exit of one of them is a crash. */
  const expectedRunning = new Set<number>()

  async function awaitExit(slot: Slot, what: string): Promise<void> {
    const proc = slot.process
    if (proc === undefined) return
    // Cancelled once the exit is seen: a pending timer would hold the test process open.
    const cancel = new AbortController()
    const timer = delay(timeoutMs, 'timeout' as const, { signal: cancel.signal }).catch(() => 'cancelled' as const)
    const outcome = await Promise.race([proc.exited.then(() => 'exited' as const), timer])
    cancel.abort()
    if (outcome === 'timeout') {
      proc.signal('SIGKILL')
      await proc.exited
      throw new Error(`nats server ${slot.name} did not exit within ${timeoutMs} ms of ${what}; killed it\n${await logTail(slot.logFile)}`)
    }
  }

  /** Starts the given servers; once, if a port was taken in the meantime, again on fresh ports (initial start only). */
  async function startSlots(targets: readonly Slot[], mayChoosePorts: boolean): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      for (const slot of targets) {
        await spawn(slot)
        expectedRunning.add(slot.index)
      }
      try {
        await waitReady()
        return
      } catch (err) {
        const logs = await Promise.all(targets.map(currentLog))
        const portTaken = logs.some((text) => ADDRESS_IN_USE.test(text))
        if (!portTaken || attempt >= 1) throw err
        for (const slot of targets) {
          expectedRunning.delete(slot.index)
          slot.process?.signal('SIGKILL')
          await slot.process?.exited
        }
        // A restarted server must keep its ports (the others' routes name them): retry as is.
        if (mayChoosePorts) await writeConfigs()
      }
    }
  }

  function slotAt(i: number): Slot {
    const slot = slots[i]
    if (slot === undefined) throw new RangeError(`no nats server ${i} in a cluster of ${slots.length}`)
    return slot
  }

  let closed = false
  const cluster: NatsCluster = {
    get urls() {
      return slots.map((slot) => `nats://127.0.0.1:${slot.ports.client}`)
    },
    size: slots.length,
    name: clusterName,
    dir,
    get certificates() {
      return certificates
    },
    serverName: (i) => slotAt(i).name,
    monitorUrl: (i) => `http://127.0.0.1:${slotAt(i).ports.http}`,
    pid(i) {
      const proc = slotAt(i).process
      return proc?.running() ? proc.pid : undefined
    },
    async kill(i, signal = 'SIGKILL') {
      if (NOT_FATAL.has(signal)) throw new RangeError(`kill(${i}, ${signal}) would never see an exit: use pause/resume`)
      const slot = slotAt(i)
      if (!slot.process?.running()) return
      expectedRunning.delete(i)
      slot.process.signal(signal)
      // A paused process does not act on SIGTERM until it runs again.
      if (slot.paused) slot.process.signal('SIGCONT')
      await awaitExit(slot, signal)
    },
    pause(i) {
      const slot = slotAt(i)
      slot.process?.signal('SIGSTOP')
      slot.paused = true
    },
    resume(i) {
      const slot = slotAt(i)
      slot.process?.signal('SIGCONT')
      slot.paused = false
    },
    async start(i) {
      await startSlots([slotAt(i)], false)
    },
    async stopAll() {
      await Promise.all(slots.map((_, i) => cluster.kill(i, 'SIGTERM')))
    },
    async startAll() {
      await startSlots(
        slots.filter((slot) => !slot.process?.running()),
        false,
      )
    },
    waitReady,
    logTail: (i, lines) => logTail(slotAt(i).logFile, lines, /Healthcheck failed/),
    async close() {
      if (closed) return
      closed = true
      expectedRunning.clear()
      for (const slot of slots) slot.process?.signal('SIGKILL')
      await Promise.all(slots.map((slot) => slot.process?.exited))
      if (process.env['NATS_HARNESS_KEEP'] === undefined) await rm(dir, { recursive: true, force: true })
    },
  }

  try {
    if (options.tls !== undefined) certificates = await makeTestCertificates(dir)
    await writeConfigs()
    await startSlots(slots, true)
  } catch (err) {
    await cluster.close()
    throw err
  }
  return cluster
}
