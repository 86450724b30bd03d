/**
 * Shared by the POST /prices tests: a server on a memory-level store with a
 * write token, a poster, and what the store answers over GET, to compare
 * with the records sent.
 */
import { MemoryLevel } from 'memory-level'
import { afterEach } from 'vitest'
import { startServer, type RunningServer, type StartServerOptions } from '../../../src/adapters/http/node.js'
import { PriceStore } from '../../../src/index.js'
import type { DemoRecord } from '../../../src/demo/demo-data.js'
import { PROVIDER, asReturned } from './demo-server.js'

/** The write token of every test server: long and random-looking, so a leak is unmistakable. */
export const TOKEN = 'tk_9f2c41d7e6b84a0c93e1f5d2a7b6c8e0'

export interface WriteServer {
  readonly store: PriceStore
  readonly running: RunningServer
  readonly url: string
  /** Everything handed to onError, as text (message and stack), to look for the token in. */
  readonly reported: string[]
  /** POSTs `body` to /prices with the token (unless `headers.authorization` says otherwise). */
  post(body: string | Buffer, headers?: Record<string, string>): Promise<{ status: number; headers: Headers; text: string; json: any }>
  close(): Promise<void>
}

/** Starts a server on a fresh memory-level store, with the write token unless `writeToken` is given (`undefined` for none). */
export async function startWriteServer(options: Partial<Omit<StartServerOptions, 'writeToken'>> & { writeToken?: string | undefined } = {}): Promise<WriteServer> {
  const store = await PriceStore.open(new MemoryLevel(), { provider: PROVIDER })
  const reported: string[] = []
  const { writeToken = 'writeToken' in options ? undefined : TOKEN, ...rest } = options
  const running = await startServer({
    store,
    ...rest,
    ...(writeToken === undefined ? {} : { writeToken }),
    onError: (err) => reported.push(err instanceof Error ? `${err.message}\n${err.stack ?? ''}` : String(err)),
  })
  const url = running.url
  return {
    store,
    running,
    url,
    reported,
    async post(body, headers = {}) {
      const res = await fetch(`${url}/prices`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', ...headers },
        body,
      })
      return answerOf(res)
    },
    async close() {
      await running.close()
      await store.close()
    },
  }
}

/** The records as NDJSON text. */
export function ndjson(records: readonly object[]): string {
  return records.map((record) => JSON.stringify(record)).join('\n') + '\n'
}

/** What GET /prices answers for each symbol of `records` (all of them, newest first), from the server. */
export async function answeredBySymbol(url: string, symbols: Iterable<string>): Promise<Record<string, unknown[]>> {
  const out: Record<string, unknown[]> = {}
  for (const symbol of [...new Set(symbols)].sort()) {
    const res = await fetch(`${url}/prices?symbol=${encodeURIComponent(symbol)}&limit=3000`)
    out[symbol] = (await res.json()) as unknown[]
  }
  return out
}

/** What GET /prices must answer for `records` (distinct per symbol and timestamp), built from the records themselves. */
export function expectedBySymbol(records: readonly DemoRecord[]): Record<string, unknown[]> {
  const out: Record<string, unknown[]> = {}
  for (const symbol of [...new Set(records.map((record) => record.symbol))].sort()) {
    out[symbol] = records
      .filter((record) => record.symbol === symbol)
      .sort((a, b) => b.timestamp - a.timestamp || (a.id < b.id ? 1 : -1))
      .map(asReturned)
  }
  return out
}

/** Gives the calling test file a `startWriteServer` whose servers are closed after each test. */
export function useWriteServers(): typeof startWriteServer {
  const servers: WriteServer[] = []
  afterEach(async () => {
    for (const server of servers.splice(0)) await server.close()
  })
  return async (options) => {
    const server = await startWriteServer(options)
    servers.push(server)
    return server
  }
}

/** A fetched answer read whole: its status, headers, text and the JSON it holds (`undefined` when it is not JSON). */
export async function answerOf(res: Response): Promise<{ status: number; headers: Headers; text: string; json: any }> {
  const text = await res.text()
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    json = undefined
  }
  return { status: res.status, headers: res.headers, text, json }
}
