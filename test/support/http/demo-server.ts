import { mkdtemp, rm } from 'node:fs/promises'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { MemoryLevel } from 'memory-level'
import { startServer, type RunningServer } from '../../../src/adapters/http/node.js'
import type { PricesQueryable } from '../../../src/adapters/http/prices/answer.js'
import { DEFAULT_PROVIDER } from '../../../src/cli/config.js'
import { DEMO_TOKENS, generateDemoRecords, type DemoRecord } from '../../../src/demo/demo-data.js'
import { PriceStore, type Limits, type NewPriceRecord, type PriceRecord } from '../../../src/index.js'

/** The provider of every test store: RedStone's, so `redstone-api`'s defaults fit. */
export const PROVIDER = DEFAULT_PROVIDER

/** A small demo data set: 5 tokens, one record each every 10 s for 2 hours, ending at END. */
export const END = Date.UTC(2024, 5, 1)
export const TOKENS = DEMO_TOKENS.filter((token) => ['BTC', 'ETH', 'AR', 'stETH', 'USDC.e'].includes(token.symbol))

/**
 * Every record of the small demo set, in generation order: unsigned (a random
 * Arweave-looking `signature` in place of the demo key's `liteEvmSignature`),
 * so each record's fields are in the order the API returns them.
 */
export function demoRecords(): DemoRecord[] {
  return [...generateDemoRecords({ providerId: PROVIDER.id, end: END, durationMs: 2 * 3_600_000, tokens: TOKENS, signed: false })]
}

/** A store on memory-level holding {@link demoRecords}. */
export async function openDemoStore(limits?: Partial<Limits>): Promise<{ store: PriceStore; records: DemoRecord[] }> {
  const store = await PriceStore.open(new MemoryLevel(), limits === undefined ? { provider: PROVIDER } : { provider: PROVIDER, limits })
  const records = demoRecords()
  await store.putMany(records)
  return { store, records }
}

/** A classic-level store of {@link PROVIDER} in a new temporary directory (`db` inside `dir`), holding `records`, served on port 0. */
export async function servedDiskStore(records: readonly NewPriceRecord[]): Promise<{ dir: string; db: string; store: PriceStore; server: RunningServer; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'price-store-http-'))
  const db = join(dir, 'db')
  const store = await PriceStore.open(db, { provider: PROVIDER })
  for (let i = 0; i < records.length; i += 5_000) await store.putMany(records.slice(i, i + 5_000))
  return { dir, db, store, server: await serve(store), cleanup: () => rm(dir, { recursive: true, force: true }) }
}

/** Starts a server on 127.0.0.1, port 0. */
export async function serve(store: PricesQueryable, onError?: (err: unknown) => void): Promise<RunningServer> {
  return startServer(onError === undefined ? { store } : { store, onError })
}

/** The record as the API returns it: stored fields plus `providerPublicKey`. */
export function asReturned(record: DemoRecord): PriceRecord {
  return { ...record, providerPublicKey: PROVIDER.publicKey }
}

/** One symbol's demo records, newest first (demo timestamps are unique per symbol). */
export function newestFirst(records: readonly DemoRecord[], symbol: string): DemoRecord[] {
  return records.filter((record) => record.symbol === symbol).sort((a, b) => b.timestamp - a.timestamp)
}

/**
 * Sends raw bytes to the server and collects everything it answers until it
 * closes the connection (or `timeoutMs` passes, reported as `timedOut`).
 * A reset from the server (it may close while we still write) is reported, not thrown.
 */
export function rawRequest(url: string, text: string, timeoutMs = 5_000): Promise<{ response: string; timedOut: boolean; error?: string }> {
  const { hostname, port } = new URL(url)
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname)
    let response = ''
    let error: string | undefined
    const timer = setTimeout(() => {
      socket.destroy()
      resolve({ response, timedOut: true })
    }, timeoutMs)
    socket.setEncoding('utf8')
    socket.on('connect', () => socket.end(text))
    socket.on('data', (chunk: string) => {
      response += chunk
    })
    socket.on('error', (err: Error & { code?: string }) => {
      error = err.code ?? err.message
    })
    socket.on('close', () => {
      clearTimeout(timer)
      resolve(error === undefined ? { response, timedOut: false } : { response, timedOut: false, error })
    })
  })
}

/** Splits a raw HTTP/1.1 response into status, lower-case headers and body. */
export function parseRawResponse(response: string): { status: number; headers: Record<string, string>; body: string } {
  const end = response.indexOf('\r\n\r\n')
  const [statusLine = '', ...headerLines] = response.slice(0, end).split('\r\n')
  const headers: Record<string, string> = {}
  for (const line of headerLines) {
    const colon = line.indexOf(':')
    headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim()
  }
  return { status: Number(statusLine.split(' ')[1]), headers, body: response.slice(end + 4) }
}
