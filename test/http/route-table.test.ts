/**
 * The route table is the one declaration of every endpoint: docs/openapi.yaml
 * documents exactly its rows' operations, and a real handler dispatches,
 * refuses (405 and `allow`), opens to other origins (CORS) and names (access
 * log) each row as the row says, a row added to the table included.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parse } from 'yaml'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createRoutedHandler, type PricesHandler, type PricesHandlerOptions } from '../../src/adapters/http/handler.js'
import type { AccessLogEntry } from '../../src/adapters/http/observe/access-log.js'
import { ROUTES, type RouteRow } from '../../src/adapters/http/route-table.js'
import type { PricesQueryable } from '../../src/adapters/http/prices/answer.js'
import type { PriceStore } from '../../src/index.js'
import { openDemoStore } from '../support/http/demo-server.js'

const METHODS = ['get', 'head', 'post', 'put', 'patch', 'delete', 'options', 'trace'] as const
const ORIGIN = 'https://app.example'

/** The methods `allow` names on `path` when every row of `table` is served: those of its rows, in the table's order. */
const allowOn = (table: readonly RouteRow[], path: string): string =>
  [...new Set(table.filter((row) => row.paths.includes(path)).flatMap((row) => row.methods))].join(', ')

/** A handler of `store` serving `table` on a server of its own, its access log kept. */
async function listen(store: PricesQueryable, options: PricesHandlerOptions, table: readonly RouteRow[] = ROUTES) {
  const log: AccessLogEntry[] = []
  const handler: PricesHandler = createRoutedHandler(store, { ...options, accessLog: (entry) => log.push(entry) }, table)
  const http: Server = createServer((req, res) => handler(req, res))
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve))
  const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}`
  /** The access log's entry of the request for `path` by `method` (it is written once the answer has ended). */
  const logged = async (method: string, path: string): Promise<AccessLogEntry | undefined> => {
    for (let i = 0; i < 200; i++) {
      const entry = log.find((candidate) => candidate.method === method && candidate.path === path)
      if (entry !== undefined) return entry
      await new Promise((resolve) => setTimeout(resolve, 5))
    }
    return undefined
  }
  const close = async (): Promise<void> => {
    await handler.close()
    http.closeAllConnections()
    await new Promise<void>((resolve) => http.close(() => resolve()))
  }
  return { url, logged, close }
}

/** Checks `rows` against a handler serving every row of `table` on their paths: dispatch, 405, CORS and its name. */
async function expectServedAsDeclared(running: Awaited<ReturnType<typeof listen>>, rows: readonly RouteRow[], table: readonly RouteRow[] = rows): Promise<void> {
  for (const row of rows) {
    for (const path of row.paths) {
      const what = `${row.endpoint} ${path}`
      // Dispatched: HEAD for a read (a stream's headers only), else its first method (refused without credentials, never 404/405).
      const method = row.methods.includes('HEAD') ? 'HEAD' : row.methods[0]!
      const answer = await fetch(`${running.url}${path}`, { method, headers: { origin: ORIGIN } })
      await answer.body?.cancel()
      expect([404, 405], what).not.toContain(answer.status)
      expect((await running.logged(method, path))?.endpoint, what).toBe(row.endpoint)
      expect(answer.headers.get('access-control-allow-origin'), what).toBe(row.cors === 'read' ? '*' : null)
      // Any other method: 405, with every method served on the path.
      const refused = await fetch(`${running.url}${path}`, { method: 'DELETE' })
      await refused.body?.cancel()
      expect(refused.status, what).toBe(405)
      expect(refused.headers.get('allow'), what).toBe(allowOn(table, path))
      // A preflight: let through when the path's GET (or, for a POST-only path, nothing) is a read.
      const preflight = await fetch(`${running.url}${path}`, { method: 'OPTIONS', headers: { origin: ORIGIN, 'access-control-request-method': 'GET' } })
      expect(preflight.status, what).toBe(204)
      expect(preflight.headers.get('allow'), what).toBe(`${allowOn(table, path)}, OPTIONS`)
      const reader = table.find((candidate) => candidate.paths.includes(path) && candidate.methods.includes('GET'))
      expect(preflight.headers.get('access-control-allow-origin'), what).toBe(reader?.cors === 'read' ? '*' : null)
    }
  }
}

let store: PriceStore
let backupDir: string

beforeAll(async () => {
  backupDir = await mkdtemp(join(tmpdir(), 'price-store-routes-'))
  store = (await openDemoStore()).store
})

afterAll(async () => {
  await store?.close()
  if (backupDir !== undefined) await rm(backupDir, { recursive: true, force: true })
})

/** Everything a `PriceStore` can serve: writes, metrics, backups, CORS for any origin. */
const EVERYTHING: PricesHandlerOptions = { writeToken: 'route-table-test-token', metrics: true, cors: { origins: '*' } }

describe('the route table', () => {
  it('has the operations of docs/openapi.yaml, each on one of its rows, and no other', async () => {
    const doc = parse(await readFile(new URL('../../docs/openapi.yaml', import.meta.url), 'utf8')) as { paths: Record<string, Record<string, any>> }
    const documented = Object.entries<Record<string, any>>(doc.paths).flatMap(([path, item]) =>
      METHODS.filter((method) => item[method] !== undefined).map((method) => ({ path, method: method.toUpperCase(), id: item[method].operationId as string })),
    )
    expect(documented.length).toBeGreaterThan(0)
    for (const { path, method, id } of documented) {
      const row = ROUTES.find((candidate) => candidate.operations.includes(id))
      expect(row, `${method} ${path} (${id}) has a row`).toBeDefined()
      expect(row!.paths, id).toContain(path)
      expect(row!.methods, id).toContain(method)
    }
    const ids = documented.map(({ id }) => id)
    for (const row of ROUTES) {
      expect(row.operations.length, `${row.endpoint} ${row.paths[0]} is documented`).toBeGreaterThan(0)
      for (const id of row.operations) expect(ids, `${row.endpoint}: ${id}`).toContain(id)
    }
    expect(new Set(ids).size).toBe(ids.length)
  })

  it('is what a handler serving every row dispatches, refuses, opens to other origins and names', async () => {
    const running = await listen(store, { ...EVERYTHING, backupDir })
    try {
      await expectServedAsDeclared(running, ROUTES)
      expect((await fetch(`${running.url}/nowhere`)).status).toBe(404)
    } finally {
      await running.close()
    }
  }, 60_000)

  it('serves a row added to it, in every respect, with nothing else to change', async () => {
    const echo: RouteRow = {
      endpoint: 'echo', paths: ['/echo', '/echo/'], methods: ['GET', 'HEAD'], cors: 'read', operations: ['getEcho'],
      open: () => ({ req, res, params, head }) => {
        req.resume()
        res.writeHead(200, { 'content-type': 'text/plain' }).end(head ? undefined : params.get('say') ?? '')
      },
    }
    // A POST beside an existing read: its path's 405s name it.
    const poke: RouteRow = {
      endpoint: 'poke', paths: ['/health'], methods: ['POST'], cors: 'closed', operations: ['postHealth'],
      open: () => ({ req, res }) => {
        req.resume()
        res.writeHead(202).end()
      },
    }
    // A row whose need the store does not meet is not served: its path is not the handler's.
    const unmet: RouteRow = { ...echo, endpoint: 'unmet', paths: ['/unmet'], needs: 'watch' }
    const table = [...ROUTES, echo, poke]
    const running = await listen(store, EVERYTHING, table)
    const stub = await listen({ query: () => Promise.resolve([]) }, {}, [...ROUTES, unmet])
    try {
      expect(await (await fetch(`${running.url}/echo?say=hi`)).text()).toBe('hi')
      expect((await fetch(`${running.url}/health`, { method: 'POST' })).status).toBe(202)
      await expectServedAsDeclared(running, [echo, poke], table)
      expect((await fetch(`${stub.url}/unmet`)).status).toBe(404)
    } finally {
      await running.close()
      await stub.close()
    }
  }, 60_000)
})
