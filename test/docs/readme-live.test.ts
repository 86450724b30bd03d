/**
 * The README's live block, then its daily-operation block and its cluster block (beside a NATS server the test
 * starts), run as written in a copy of a clone: `npx price-store` (the clone's own bin, no install or link), the
 * sample file it imports, and the curl lines. The only change is the ports: serve gets PORT=0 or `--port 0` (a
 * free port, read from its banner), the other lines that port instead of 9000 (or 9001), and the cluster block's
 * nodes the test's NATS server instead of 4222. Processes are started in groups of their own and stopped by PID.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { access, copyFile, mkdir, mkdtemp, readFile, readdir, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'tsup'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { NATS_SKIP_REASON, natsServerPath, startNatsCluster } from '../cluster/support/nats-cluster.js'

const root = fileURLToPath(new URL('../..', import.meta.url))
/** The block calls curl and openssl; .ci/install-tools installs them, and without them there is nothing to run as written. */
const missing = ['curl', 'openssl'].filter((tool) => spawnSync('bash', ['-c', `command -v ${tool}`]).status !== 0)
const readme = await readFile(join(root, 'README.md'), 'utf8')

/** The block after the marker `<!-- ${name}:`, one command a line. */
function markedBlock(name: string): string[] {
  const start = readme.indexOf(`<!-- ${name}:`)
  expect(start).toBeGreaterThan(-1)
  const block = /```sh\n([\s\S]*?)```/.exec(readme.slice(start))?.[1]
  return (block ?? '').trimEnd().split('\n')
}

interface Shell {
  readonly child: ChildProcess
  /** Standard output and standard error, as they came. */
  output(): string
  /** Standard output alone (curl's progress meter goes to standard error). */
  stdout(): string
  readonly exited: Promise<number | string>
  /** Stops the process group (npx, its shell and the node it runs) by the PID it was started with. */
  stop(): void
}

let clone = ''
const started: Shell[] = []

/** Runs `line` with bash in the clone, in a process group of its own. */
function shell(line: string, env: Record<string, string> = {}): Shell {
  const child = spawn('bash', ['-c', line], { cwd: clone, env: { ...process.env, ...env }, detached: true, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  let stdout = ''
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk
    stdout += chunk
  })
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk))
  const exited = new Promise<number | string>((resolve) => child.on('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')))
  const running: Shell = {
    child, output: () => output, stdout: () => stdout, exited,
    stop() {
      try {
        process.kill(-(child.pid as number), 'SIGTERM')
      } catch {
        // Already ended.
      }
    },
  }
  started.push(running)
  return running
}

/** Resolves once `shell`'s output matches `pattern`; fails at once if it ends first (the deadline only bounds a failure). */
async function waitFor(running: Shell, pattern: RegExp, what: string): Promise<RegExpMatchArray> {
  const deadline = Date.now() + 60_000
  for (;;) {
    const match = pattern.exec(running.output())
    if (match !== null) return match
    if (running.child.exitCode !== null || Date.now() > deadline) throw new Error(`${what}: no ${pattern} in:\n${running.output()}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

/** Resolves once `running` has ended with `pattern` in its output (which may arrive just after the group leader ends). */
async function waitForEnd(running: Shell, pattern: RegExp): Promise<void> {
  await running.exited
  const deadline = Date.now() + 60_000
  while (!pattern.test(running.output())) {
    if (Date.now() > deadline) throw new Error(`no ${pattern} in:\n${running.output()}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

beforeAll(async () => {
  // A copy of a clone inside node_modules/.cache, so the built bin's imports resolve from the project's node_modules.
  await mkdir(join(root, 'node_modules', '.cache'), { recursive: true })
  clone = await mkdtemp(join(root, 'node_modules', '.cache', 'price-store-readme-live-'))
  await mkdir(join(clone, 'examples'))
  await copyFile(join(root, 'package.json'), join(clone, 'package.json'))
  await copyFile(join(root, 'examples', 'prices.ndjson'), join(clone, 'examples', 'prices.ndjson'))
  // The OpenAPI document the daily block asks for: a clone has it where the bin looks (docs/, beside dist/).
  await mkdir(join(clone, 'docs'))
  await copyFile(join(root, 'docs', 'openapi.yaml'), join(clone, 'docs', 'openapi.yaml'))
  await build({
    entry: { cli: join(root, 'src/cli/main.ts') }, format: ['esm'], outDir: join(clone, 'dist'), platform: 'node', target: 'node20',
    dts: false, sourcemap: false, config: false, silent: true,
  })
})

afterAll(async () => {
  for (const running of started) running.stop()
  await Promise.all(started.map((running) => running.exited))
  if (clone !== '') await rm(clone, { recursive: true, force: true })
})

test.skipIf(missing.length > 0)(`the live block runs as written in a clone${missing.length > 0 ? ` (SKIPPED: ${missing.join(' and ')} not installed)` : ''}`, async () => {
  const [token, serve, stream, importLine, exportLine, reports, ...rest] = markedBlock('readme-live')
  expect(rest).toEqual([])
  expect(serve).toMatch(/^npx price-store serve /)
  expect(importLine).toMatch(/^npx price-store import .* examples\/prices\.ndjson/)

  expect(await shell(token as string).exited).toBe(0)
  const server = shell(serve as string, { PORT: '0' })
  // With --access-log the banner goes to standard error, the log's lines to standard output.
  const [, port] = await waitFor(server, /http:\/\/127\.0\.0\.1:(\d+)\/prices\n[\s\S]*Press Ctrl\+C to stop\./, 'serve')
  const atPort = (line: string): string => line.replaceAll('127.0.0.1:9000', `127.0.0.1:${port}`)

  const watcher = shell(atPort(stream as string))
  await waitFor(watcher, /retry:/, 'the stream')
  const imported = shell(atPort(importLine as string))
  expect(await imported.exited, imported.output()).toBe(0)
  expect(imported.output()).toMatch(/imported 90 records from 1 file/)
  // The stream shows the commits of BTC and ETH (not AR, which it was not asked for).
  await waitFor(watcher, /"symbol":"ETH"/, 'the stream')
  expect(watcher.output()).toContain('"symbol":"BTC"')
  expect(watcher.output()).not.toContain('"symbol":"AR"')
  watcher.stop()

  expect(await shell(atPort(exportLine as string)).exited).toBe(0)
  const exported = (await readFile(join(clone, 'btc.ndjson'), 'utf8')).trimEnd().split('\n')
  expect(exported).toHaveLength(30)
  const report = shell(atPort(reports as string))
  expect(await report.exited).toBe(0)
  expect(report.output()).toContain('"records":90')
  expect(report.output()).toMatch(/^price_store_/m)

  // npx passes the signal on, and the server stops gracefully (npx itself then ends by the signal).
  server.stop()
  await waitForEnd(server, /^stopped$/m)

  // The daily-operation block, next, in the same clone: its token file and the records just imported.
  const [dailyServe, compressed, backup, csvExport, openapi, ...more] = markedBlock('readme-daily')
  expect(more).toEqual([])
  expect(dailyServe).toMatch(/^npx price-store serve /)
  const daily = shell(dailyServe as string, { PORT: '0' })
  const [, dailyPort] = await waitFor(daily, /http:\/\/127\.0\.0\.1:(\d+)\/prices\n[\s\S]*Press Ctrl\+C to stop\./, 'serve')
  const atDailyPort = (line: string): string => line.replaceAll('127.0.0.1:9000', `127.0.0.1:${dailyPort}`)
  const samples = (await readFile(join(clone, 'examples', 'prices.ndjson'), 'utf8')).trimEnd().split('\n').map((line) => JSON.parse(line) as { symbol: string; timestamp: number })
  const btc = samples.filter((record) => record.symbol === 'BTC')

  const slim = shell(atDailyPort(compressed as string))
  expect(await slim.exited).toBe(0)
  const latest = JSON.parse(slim.stdout()) as Record<string, unknown>[]
  expect(latest).toHaveLength(btc.length)
  for (const record of latest) expect(Object.keys(record)).not.toContain('signature')

  const backedUp = shell(atDailyPort(backup as string))
  expect(await backedUp.exited, backedUp.output()).toBe(0)
  expect((await readdir(join(clone, 'backups', 'nightly'))).length).toBeGreaterThan(0)

  expect(await shell(atDailyPort(csvExport as string)).exited).toBe(0)
  const rows = (await readFile(join(clone, 'btc.csv'), 'utf8')).trimEnd().split('\r\n')
  // A header, then BTC's records from 00:30 on.
  expect(rows.length - 1).toBe(btc.filter((record) => record.timestamp >= Date.parse('2024-06-01T00:30:00Z')).length)
  expect(rows.length - 1).toBeGreaterThan(0)

  const described = shell(atDailyPort(openapi as string))
  expect(await described.exited).toBe(0)
  expect(described.stdout()).toMatch(/^openapi: 3/m)
  daily.stop()
  await waitForEnd(daily, /^stopped$/m)
})

test.skipIf(missing.length > 0 || natsServerPath() === undefined)(
  `the cluster block runs as written in a clone, beside a NATS server${natsServerPath() === undefined ? ` (SKIPPED: ${NATS_SKIP_REASON})` : ''}`,
  async () => {
    const lines = markedBlock('readme-cluster')
    expect(lines).toHaveLength(3)
    const nats = await startNatsCluster({ size: 1, name: 'readme-cluster' })
    try {
      // The token file the live block made; the ports are the only change: each node a free one, NATS the harness's.
      await access(join(clone, 'token'))
      const asWritten = (line: string, urls: Record<string, string>): string =>
        Object.entries(urls).reduce((text, [from, to]) => text.replaceAll(from, to), line.replace(/--port 900[0-9]/, '--port 0').replace('nats://127.0.0.1:4222', nats.urls[0] as string))
      const bannerUrl = /(http:\/\/127\.0\.0\.1:\d+)\/prices\n[\s\S]*Press Ctrl\+C to stop\./
      const [a, b, copy] = lines as [string, string, string]
      const nodeA = shell(asWritten(a, {}))
      const [, urlA] = await waitFor(nodeA, bannerUrl, 'node a')
      const nodeB = shell(asWritten(b, {}))
      const [, urlB] = await waitFor(nodeB, bannerUrl, 'node b')
      const follower = shell(asWritten(copy, { 'http://127.0.0.1:9001': urlA as string }))
      const [, urlCopy] = await waitFor(follower, bannerUrl, 'the read copy')

      // A write through node a (with the token of its line) is answered by every node.
      const samples = await readFile(join(clone, 'examples', 'prices.ndjson'), 'utf8')
      const token = (await readFile(join(clone, 'token'), 'utf8')).trim()
      const written = await fetch(`${urlA}/prices`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/x-ndjson' }, body: samples })
      expect(written.status, await written.clone().text()).toBe(200)
      const { position } = (await written.json()) as { position: number }
      for (const url of [urlA, urlB, urlCopy] as string[]) {
        // minPosition: the node answers once it has applied the write (a bounded wait, on every node).
        const stats = (await (await fetch(`${url}/stats?minPosition=${position}`)).json()) as { records: number }
        expect(stats.records, url).toBe(samples.trimEnd().split('\n').length)
      }
      for (const node of [follower, nodeB, nodeA]) {
        node.stop()
        await waitForEnd(node, /^stopped$/m)
      }
    } finally {
      await nats.close()
    }
  },
  120_000,
)
