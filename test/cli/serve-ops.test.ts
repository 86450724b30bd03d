/**
 * `serve`'s operations flags (--access-log, --no-metrics), and what the
 * commands that open the database say while serve holds it.
 */
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { demoDbForFile, run, startServe } from './helpers.js'

let dir: string
let db: string
demoDbForFile((newDir, newDb) => {
  dir = newDir
  db = newDb
})

/** The JSON lines serve wrote to standard output: nothing else is there with --access-log (its banner goes to standard error). */
const jsonLines = (stdout: string): Record<string, unknown>[] =>
  stdout
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>)

describe('price-store serve: access log and metrics', () => {
  it('--access-log writes one JSON line per request to stdout, without header values', async () => {
    const { memory, exit, endpoint, banner } = await startServe(['--db', db, '--access-log'])
    expect(banner).toContain('for operations')
    const base = endpoint.slice(0, -'/prices'.length)
    const secret = 'tok-SECRET-42'
    try {
      await (await fetch(`${endpoint}?symbol=BTC&limit=2`, { headers: { authorization: `Bearer ${secret}` } })).arrayBuffer()
      await (await fetch(`${base}/health`)).arrayBuffer()
      await memory.waitForStdout(/"endpoint":"health"/)
      const lines = jsonLines(memory.stdout())
      expect(lines).toHaveLength(2)
      expect(lines[0]).toMatchObject({ method: 'GET', path: '/prices', query: 'symbol=BTC&limit=2', endpoint: 'prices', form: 'latest-n', status: 200, remoteAddress: '127.0.0.1' })
      expect(Object.keys(lines[0]!).sort()).toEqual(['bytes', 'durationMs', 'endpoint', 'form', 'method', 'path', 'query', 'remoteAddress', 'status', 'time'])
      expect(lines[1]).toMatchObject({ path: '/health', endpoint: 'health', status: 200 })
      expect(memory.stdout()).not.toContain(secret)
    } finally {
      memory.signal('SIGINT')
      expect(await exit).toBe(0)
    }
  })

  it('--max-exports limits the exports sent at once (0: none); a bad value is exit 2', async () => {
    const { memory, exit, endpoint } = await startServe(['--db', db, '--max-exports', '0'])
    try {
      const refused = await fetch(`${endpoint}/export?symbol=BTC`)
      expect(refused.status).toBe(503)
      expect(((await refused.json()) as { error: { code: string; message: string } }).error).toMatchObject({ code: 'HTTP_BUSY', message: expect.stringContaining('maxExports is 0') })
    } finally {
      memory.signal('SIGINT')
      expect(await exit).toBe(0)
    }
    const bad = await run(['serve', '--db', db, '--port', '0', '--max-exports', '-1'])
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain('--max-exports')
  })

  it('serves /metrics by default, logs nothing by default; --no-metrics turns /metrics off', async () => {
    const { memory, exit, endpoint, banner } = await startServe(['--db', db])
    const base = endpoint.slice(0, -'/prices'.length)
    try {
      await (await fetch(`${endpoint}?symbol=BTC`)).arrayBuffer()
      const metrics = await fetch(`${base}/metrics`)
      expect(metrics.status).toBe(200)
      const text = await metrics.text()
      expect(text).toMatch(/^price_store_http_requests_total\{endpoint="prices",form="latest",status="200"\} 1$/m)
      expect(text).toMatch(/^price_store_records_written_total 0$/m)
    } finally {
      memory.signal('SIGINT')
      expect(await exit).toBe(0)
    }
    // Every request was done before the server stopped: a log would have been written by now.
    expect(memory.stdout().slice(banner.length)).toBe('')

    const off = await startServe(['--db', db, '--no-metrics'])
    try {
      expect((await fetch(`${off.endpoint.slice(0, -'/prices'.length)}/metrics`)).status).toBe(404)
    } finally {
      off.memory.signal('SIGINT')
      expect(await off.exit).toBe(0)
    }
  })

  it('export, stats and query, refused while serve holds the database, name the HTTP endpoint answering the same', async () => {
    const { memory, exit } = await startServe(['--db', db])
    try {
      const cases: [string[], string | undefined][] = [
        [['export'], 'GET /prices/export'],
        [['stats'], 'GET /stats'],
        [['query', 'symbol=BTC'], 'GET /prices takes the same parameters'],
        [['backup', join(dir, 'locked-backup')], undefined],
      ]
      for (const [command, hint] of cases) {
        const { code, stderr } = await run([...command, '--db', db])
        expect(code, command[0]).toBe(1)
        expect(stderr).toContain(`the database at ${db} is in use by another process`)
        if (hint === undefined) expect(stderr).not.toContain('GET /')
        else expect(stderr).toContain(hint)
      }
    } finally {
      memory.signal('SIGINT')
      expect(await exit).toBe(0)
    }
  })
})
