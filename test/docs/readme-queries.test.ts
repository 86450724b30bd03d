/**
 * The README's shell blocks that need only the demo data set and a server,
 * run as written, in order: the query blocks (RedStone's four forms, the
 * forms beyond them), the block of clients beyond curl (the feed catalogue,
 * a Parquet export, validity windows) and the signature block (serve with
 * its flags, its verify request, then its quality command). The database holds the
 * records `price-store demo` writes with its defaults (what `npm start`
 * loads): the same ids, values and timestamps, each BTC record signed with
 * the demo key as the demo signs it (the signature block verifies BTC), the
 * other symbols' left unsigned to spare some 300,000 signatures (no line
 * here reads a signature but BTC's). The only change to a line is the port (serve takes a free one, the curl
 * lines that port instead of 9000). Blocks that need NATS, a token file
 * or a terminal of their own are run by readme-live.test.ts or not at all.
 */
import { spawn, spawnSync } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DEFAULT_PROVIDER } from '../../src/cli/config.js'
import { demoLiteSignature } from '../../src/demo/demo-key.js'
import { generateDemoRecords, type DemoRecord } from '../../src/demo/demo-data.js'
import { PriceStore } from '../../src/index.js'
import { run, startServe, tempDir } from '../cli/helpers.js'

const readme = await readFile(new URL('../../README.md', import.meta.url), 'utf8')
const hasCurl = spawnSync('bash', ['-c', 'command -v curl']).status === 0

/** Every ```sh block of the README, in order, as its lines. */
const blocks = [...readme.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => (match[1] as string).trimEnd().split('\n'))
const isQuery = (line: string): boolean => line.startsWith("curl 'http://127.0.0.1:9000/prices?")
const queryBlocks = blocks.filter((lines) => lines.every(isQuery))
const signatureBlock = blocks.find((lines) => lines.some((line) => line.includes('--evm-signer')))
const reachBlock = blocks.find((lines) => lines.some((line) => line.includes('/feeds?')))

let db = ''
let cleanup: () => Promise<void> = async () => {}

beforeAll(async () => {
  const temp = await tempDir()
  cleanup = temp.cleanup
  db = join(temp.dir, 'db')
  const store = await PriceStore.open(db, { provider: DEFAULT_PROVIDER })
  try {
    let batch: DemoRecord[] = []
    for (const record of generateDemoRecords({ providerId: DEFAULT_PROVIDER.id, signed: false })) {
      if (record.symbol === 'BTC') {
        const { signature: _random, ...fields } = record
        batch.push({ ...fields, liteEvmSignature: demoLiteSignature(record) })
      } else {
        batch.push(record)
      }
      if (batch.length === 10_000) {
        await store.putMany(batch)
        batch = []
      }
    }
    await store.putMany(batch)
  } finally {
    await store.close()
  }
}, 300_000)

afterAll(async () => {
  await cleanup()
})

/**
 * Runs one README line with bash, the server's port in place of 9000; its standard output. Asynchronous: the
 * server answering it runs in this process, so a synchronous spawn would block the very server it waits for.
 */
async function shellLine(line: string, port: string, cwd?: string): Promise<string> {
  const child = spawn('bash', ['-c', line.replaceAll('127.0.0.1:9000', `127.0.0.1:${port}`)], { stdio: ['ignore', 'pipe', 'pipe'], ...(cwd === undefined ? {} : { cwd }) })
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve))
  expect(code, `${line}\n${stderr}`).toBe(0)
  return stdout
}

/** `serve` started in-process with the README line's own flags (after `npx price-store serve`), the database given. */
async function serveAsWritten(line: string) {
  expect(line).toMatch(/^npx price-store serve\b/)
  const args = line.replace(/#.*$/, '').trim().split(/\s+/).slice(3)
  const served = await startServe(['--db', db, ...args])
  const port = /127\.0\.0\.1:(\d+)/.exec(served.endpoint)?.[1] as string
  return { ...served, port }
}

describe.skipIf(!hasCurl)('the README shell blocks on the demo data set, as written', () => {
  it('finds the blocks it runs', () => {
    expect(queryBlocks.map((lines) => lines.length)).toEqual([4, 4])
    expect(signatureBlock?.length).toBe(3)
    expect(reachBlock?.length).toBe(3)
  })

  it('the query blocks: each line answers 200 with data, not an error', async () => {
    const served = await serveAsWritten('npx price-store serve')
    try {
      for (const line of queryBlocks.flat()) {
        const answer = JSON.parse(await shellLine(line, served.port)) as unknown
        expect(answer, line).not.toHaveProperty('error')
        expect(Array.isArray(answer) ? answer.length : Object.keys(answer as object).length, line).toBeGreaterThan(0)
      }
    } finally {
      served.memory.signal('SIGINT')
      expect(await served.exit).toBe(0)
    }
  }, 120_000)

  it('the block of clients beyond curl: the feed catalogue, a Parquet export and validity windows', async () => {
    const [feedsLine, parquetLine, validLine] = reachBlock as [string, string, string]
    const served = await serveAsWritten('npx price-store serve')
    const cwd = join(db, '..')
    try {
      const catalogue = JSON.parse(await shellLine(feedsLine, served.port)) as { total: number; feeds: { symbol: string }[] }
      expect(catalogue.total).toBe(20)
      expect(catalogue.feeds).toHaveLength(5)
      await shellLine(parquetLine, served.port, cwd)
      const file = await readFile(join(cwd, 'btc.parquet'))
      // A Parquet file starts and ends with its magic bytes.
      expect(file.subarray(0, 4).toString()).toBe('PAR1')
      expect(file.subarray(-4).toString()).toBe('PAR1')
      const [record] = JSON.parse(await shellLine(validLine, served.port)) as { value: number; timestamp: number; validUntil: number }[]
      expect(Object.keys(record ?? {})).toEqual(['value', 'timestamp', 'validUntil'])
      // The record in force at the line's time, and the next one's timestamp after it (one every 10 s).
      expect(record?.timestamp).toBeLessThanOrEqual(1717160000000)
      expect(record?.validUntil).toBeGreaterThan(1717160000000)
      expect((record?.validUntil ?? 0) - (record?.timestamp ?? 0)).toBeLessThanOrEqual(20_000)
    } finally {
      served.memory.signal('SIGINT')
      expect(await served.exit).toBe(0)
    }
  }, 120_000)

  it('the signature block: the demo verifies valid under the README\'s signers; quality runs', async () => {
    const [serveLine, verifyLine, qualityLine] = signatureBlock as [string, string, string]
    const served = await serveAsWritten(serveLine)
    try {
      const report = JSON.parse(await shellLine(verifyLine, served.port)) as { records: number; recheck: { verdicts: Record<string, number>; failing: unknown[] } }
      // Two days of one record every 10 s.
      expect(report.records).toBe(17_280)
      expect(report.recheck.verdicts).toEqual({ valid: 17_280, unsigned: 0, invalid: 0, malformed: 0, 'signer-not-allowed': 0 })
      expect(report.recheck.failing).toEqual([])
    } finally {
      served.memory.signal('SIGINT')
      expect(await served.exit).toBe(0)
    }
    expect(qualityLine).toMatch(/^npx price-store quality /)
    const quality = await run([...qualityLine.replace(/#.*$/, '').trim().split(/\s+/).slice(2), '--db', db])
    expect(quality.code, quality.stderr).toBe(0)
    expect(quality.stdout).toMatch(/BTC/)
  }, 120_000)
})
