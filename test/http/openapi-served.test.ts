/**
 * GET /openapi.yaml (issue 23: the OpenAPI document was not served): every
 * handler serves docs/openapi.yaml as the package ships it, below its base
 * path, and the document describes that path too.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parse } from 'yaml'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createPricesHandler, type PricesHandlerOptions } from '../../src/adapters/http/handler.js'
import { startServer, type RunningServer } from '../../src/adapters/http/node.js'
import { OPENAPI_PATH } from '../../src/adapters/http/routes.js'
import type { PricesQueryable } from '../../src/adapters/http/prices/answer.js'
import type { PriceStore } from '../../src/index.js'
import { openDemoStore } from '../support/http/demo-server.js'
import { checkSchema, resolveRef } from '../support/http/schema-check.js'

type Doc = Record<string, any>
let text: string
let doc: Doc
let store: PriceStore
let server: RunningServer

beforeAll(async () => {
  text = await readFile(new URL('../../docs/openapi.yaml', import.meta.url), 'utf8')
  doc = parse(text) as Doc
  ;({ store } = await openDemoStore())
  server = await startServer({ store, metrics: true })
})

afterAll(async () => {
  await server?.close()
  await store?.close()
})

const IDENTITY = { 'accept-encoding': 'identity' }

const deref = (node: any): any => (typeof node?.$ref === 'string' ? deref(resolveRef(doc, node.$ref)) : node)

/** A handler made with `options` on a server of its own; `close` stops it. */
async function listen(target: PricesQueryable, options: PricesHandlerOptions): Promise<{ url: string; close(): Promise<void> }> {
  const handler = createPricesHandler(target, options)
  const http: Server = createServer((req, res) => handler(req, res))
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => http.close(() => resolve())),
  }
}

describe('GET /openapi.yaml', () => {
  it('is docs/openapi.yaml byte for byte, as the document says of itself', async () => {
    // Uncompressed, so content-length is the document's own (fetch asks for gzip and br by default).
    const response = await fetch(`${server.url}${OPENAPI_PATH}`, { headers: IDENTITY })
    expect(response.status).toBe(200)
    const body = await response.text()
    expect(body).toBe(text)
    expect(response.headers.get('content-length')).toBe(String(Buffer.byteLength(text, 'utf8')))
    const contentType = response.headers.get('content-type')!
    expect(contentType).toBe('application/yaml')
    // The path is documented, with this content type and a string body.
    const documented = deref(doc.paths[OPENAPI_PATH].get.responses['200'])
    expect(documented.content[contentType], `${contentType} is documented`).toBeDefined()
    expect(checkSchema(body, documented.content[contentType].schema, doc)).toEqual([])
    expect((parse(body) as Doc).openapi).toMatch(/^3\.1\./)
  })

  it('HEAD has the headers of GET and no body; other methods get 405', async () => {
    const head = await fetch(`${server.url}${OPENAPI_PATH}`, { method: 'HEAD', headers: IDENTITY })
    expect(head.status).toBe(200)
    expect(head.headers.get('content-length')).toBe(String(Buffer.byteLength(text, 'utf8')))
    expect(await head.text()).toBe('')
    const post = await fetch(`${server.url}${OPENAPI_PATH}`, { method: 'POST' })
    expect(post.status).toBe(405)
    expect(post.headers.get('allow')).toBe('GET, HEAD')
  })

  it('is counted by the metrics as endpoint="openapi"', async () => {
    await (await fetch(`${server.url}${OPENAPI_PATH}`)).arrayBuffer()
    let metrics = ''
    for (let i = 0; i < 100 && !metrics.includes('endpoint="openapi"'); i++) metrics = await (await fetch(`${server.url}/metrics`)).text()
    expect(metrics).toMatch(/price_store_http_requests_total\{endpoint="openapi",form="none",status="200"\} [1-9]/)
  })

  it('is served below the base path, by a handler of any store (a stub with only query too)', async () => {
    const stub = { query: () => Promise.resolve([]) }
    const running = await listen(stub, { basePath: '/v1' })
    try {
      const below = await fetch(`${running.url}/v1${OPENAPI_PATH}`)
      expect(below.status).toBe(200)
      expect(await below.text()).toBe(text)
      expect((await fetch(`${running.url}${OPENAPI_PATH}`)).status).toBe(404)
      // The 404 names it among what is served.
      const notFound = (await (await fetch(`${running.url}/v1/nope`)).json()) as { error: { message: string } }
      expect(notFound.error.message).toContain(`/v1${OPENAPI_PATH}`)
    } finally {
      await running.close()
    }
  })

  it('serves the file named by openApiDocument; a missing one answers 404 until it exists', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'price-store-openapi-'))
    const file = join(dir, 'api.yaml')
    const running = await listen(store, { openApiDocument: file })
    try {
      const missing = await fetch(`${running.url}${OPENAPI_PATH}`)
      expect(missing.status).toBe(404)
      expect(((await missing.json()) as { error: { code: string; message: string } }).error).toMatchObject({ code: 'HTTP_NOT_FOUND', message: expect.stringContaining('openApiDocument') })
      await writeFile(file, 'openapi: 3.1.0\n')
      const found = await fetch(`${running.url}${OPENAPI_PATH}`)
      expect(found.status).toBe(200)
      expect(await found.text()).toBe('openapi: 3.1.0\n')
    } finally {
      await running.close()
      await rm(dir, { recursive: true, force: true })
    }
  })
})
