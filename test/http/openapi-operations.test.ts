/**
 * Real answers of /prices/export, /stats, /health and /metrics checked
 * against docs/openapi.yaml (as test/http/openapi.test.ts does for /prices).
 */
import { readFile } from 'node:fs/promises'
import { MemoryLevel } from 'memory-level'
import { parse } from 'yaml'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type RunningServer } from '../../src/adapters/http/node.js'
import { EXPORT_PARAMETERS } from '../../src/adapters/http/live/export-endpoint.js'
import { PriceStore, type PriceRecord } from '../../src/index.js'
import { PROVIDER, openDemoStore } from '../support/http/demo-server.js'
import { checkSchema, resolveRef } from '../support/http/schema-check.js'

type Doc = Record<string, any>
let doc: Doc
let store: PriceStore
let server: RunningServer

beforeAll(async () => {
  doc = parse(await readFile(new URL('../../docs/openapi.yaml', import.meta.url), 'utf8')) as Doc
  ;({ store } = await openDemoStore())
  server = await startServer({ store, metrics: true })
})

afterAll(async () => {
  await server?.close()
  await store?.close()
})

const deref = (node: any): any => (typeof node?.$ref === 'string' ? deref(resolveRef(doc, node.$ref)) : node)

/** GETs (or HEADs) `target` from `base`; checks status, documented headers and body against the documentation; returns the body. */
async function conforms(target: string, status: number, method: 'GET' | 'HEAD' = 'GET', base = server.url): Promise<string> {
  const response = await fetch(`${base}${target}`, { method })
  const body = await response.text()
  expect(response.status, target).toBe(status)
  const path = new URL(target, base).pathname
  const documented = deref(doc.paths[path][method.toLowerCase()].responses[String(status)])
  expect(documented, `${method} ${path} ${status} is documented`).toBeDefined()
  for (const [name, header] of Object.entries<any>(documented.headers ?? {})) {
    expect(checkSchema(response.headers.get(name), deref(header).schema, doc), `header ${name}`).toEqual([])
  }
  if (method === 'HEAD') {
    expect(body).toBe('')
    return body
  }
  const contentType = response.headers.get('content-type')!
  const media = documented.content?.[contentType]
  expect(media, `${contentType} is documented for ${method} ${path} ${status}`).toBeDefined()
  expect(checkSchema(contentType.startsWith('application/json') ? JSON.parse(body) : body, media.schema, doc)).toEqual([])
  return body
}

describe('the operations endpoints conform to docs/openapi.yaml', () => {
  it('documents exactly the parameters /prices/export takes, with examples that fit and that the endpoint takes', async () => {
    const parameters = doc.paths['/prices/export'].parameters.map(deref)
    expect(parameters.map((parameter: any) => parameter.name)).toEqual([...EXPORT_PARAMETERS])
    for (const parameter of parameters) {
      expect(checkSchema(parameter.example, parameter.schema, doc), parameter.name).toEqual([])
      expect((await fetch(`${server.url}/prices/export?${parameter.name}=${encodeURIComponent(parameter.example)}`, { method: 'HEAD' })).status).toBe(200)
    }
    const time = parameters.find((parameter: any) => parameter.name === 'from').schema
    for (const good of ['0', 'now', '2024-05-31', '2024-05-31T12:00:00Z', '2024-05-31T12:00:00.123+02:00']) expect(checkSchema(good, time, doc), good).toEqual([])
    for (const bad of ['-5', 'yesterday', 'June 1 2024']) expect(checkSchema(bad, time, doc), bad).not.toEqual([])
  })

  it('/prices/export: 200 (each line a PriceRecord), 400, 503; HEAD', async () => {
    const body = await conforms('/prices/export?symbol=AR,BTC&to=2024-05-31T23:00:00Z', 200)
    const lines = body.slice(0, -1).split('\n')
    expect(lines.length).toBeGreaterThan(0)
    for (const line of lines) expect(checkSchema(JSON.parse(line) as PriceRecord, { $ref: '#/components/schemas/PriceRecord' }, doc)).toEqual([])
    await conforms('/prices/export?symbol=NOPE', 200)
    await conforms('/prices/export?symbol=BTC', 200, 'HEAD')
    await conforms('/prices/export?from=yesterday', 400)
    await conforms('/prices/export?limit=5', 400)
    await conforms('/prices/export?from=yesterday', 400, 'HEAD')
  })

  it('/stats, /health and /metrics: 200; /stats, /export and /health of a closed store: 503', async () => {
    await conforms('/stats', 200)
    await conforms('/health', 200)
    const metrics = await conforms('/metrics', 200)
    expect(metrics).toContain('price_store_http_requests_total')
    const closed = await PriceStore.open(new MemoryLevel(), { provider: PROVIDER })
    await closed.close()
    const down = await startServer({ store: closed })
    try {
      await conforms('/stats', 503, 'GET', down.url)
      await conforms('/prices/export', 503, 'GET', down.url)
      await conforms('/prices/export', 503, 'HEAD', down.url)
      await conforms('/health', 503, 'GET', down.url)
    } finally {
      await down.close()
    }
  })
})
