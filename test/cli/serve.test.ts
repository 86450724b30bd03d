import { writeFile } from 'node:fs/promises'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DEFAULT_PROVIDER } from '../../src/cli/config.js'
import { runCli } from '../../src/cli/run-cli.js'
import { PriceStore } from '../../src/index.js'
import { memoryIo, run, tempDir } from './helpers.js'

let dir: string
let db: string
let cleanup: () => Promise<void>

beforeAll(async () => {
  ;({ dir, cleanup } = await tempDir())
  db = join(dir, 'db')
  expect((await run(['demo', '--db', db, '--days', '0.05'])).code).toBe(0)
})

afterAll(async () => {
  await cleanup()
})

/** Starts `serve` in-process; resolves once it printed its banner. */
async function startServe(args: readonly string[]) {
  const memory = memoryIo()
  const exit = runCli(['serve', '--port', '0', ...args], memory.io)
  const banner = await Promise.race([
    memory.waitForStdout(/Press Ctrl\+C to stop\.\n/).then(() => memory.stdout()),
    exit.then((code) => {
      throw new Error(`serve exited with ${code}: ${memory.stderr()}`)
    }),
  ])
  const endpoint = /^ {2}(http:\/\/\S+\/prices)$/m.exec(banner)![1]!
  const examples = [...banner.matchAll(/curl '([^']+)'/g)].map((match) => match[1]!)
  return { memory, exit, banner, endpoint, examples }
}

describe('price-store serve', () => {
  it('prints the URL and three example queries that answer; SIGINT stops it cleanly with exit 0', async () => {
    const { memory, exit, banner, endpoint, examples } = await startServe(['--db', db, '--demo-if-empty'])
    expect(banner).toContain(`price-store is serving 20 symbols from ${db}`)
    expect(memory.stderr()).not.toContain('demo data') // not empty: nothing written
    expect(examples).toHaveLength(3)
    const [latest, several, range] = await Promise.all(examples.map(async (url) => {
      const response = await fetch(url)
      expect(response.status).toBe(200)
      return response.json() as Promise<any>
    }))
    expect(latest).toHaveLength(1)
    expect(latest[0].symbol).toBe('BTC')
    expect(Object.keys(several)).toEqual(['BTC', 'ETH', 'AR'])
    expect(range.length).toBeGreaterThan(0)
    expect(range[0]).toHaveProperty('minutes')
    expect((await fetch(`${endpoint}?symbol=stETH`)).status).toBe(200)

    memory.signal('SIGINT')
    expect(await exit).toBe(0)
    expect(memory.stderr()).toContain('SIGINT: stopping')
    expect(memory.stderr()).toMatch(/stopped\n$/)
    await expect(fetch(endpoint)).rejects.toThrow()
    // The database was closed: another store can open it.
    const store = await PriceStore.open(db, { provider: DEFAULT_PROVIDER })
    await store.close()
  })

  // Requests in flight at shutdown are finished: tested on startServer itself in
  // test/e2e/http.test.ts ("graceful close"), where a gated store holds one open.

  it('takes the provider from --config, flags overriding it', async () => {
    const config = join(dir, 'config.json')
    await writeFile(config, JSON.stringify({ provider: { name: 'my-node', id: DEFAULT_PROVIDER.id, publicKey: 'from-config' }, limits: { maxLimit: 5 } }))
    const { memory, exit, endpoint } = await startServe(['--db', db, '--config', config, '--provider-public-key', 'from-flag'])
    try {
      const ok = await fetch(`${endpoint}?symbol=BTC&provider=my-node&limit=5`)
      expect(ok.status).toBe(200)
      const [record] = (await ok.json()) as { providerPublicKey: string }[]
      expect(record!.providerPublicKey).toBe('from-flag')
      expect((await fetch(`${endpoint}?symbol=BTC&limit=6`)).status).toBe(400)
      expect((await fetch(`${endpoint}?symbol=BTC&provider=redstone`)).status).toBe(400)
    } finally {
      memory.signal()
      expect(await exit).toBe(0)
    }
  })

  it('a bad config file exits 2', async () => {
    const config = join(dir, 'bad-config.json')
    await writeFile(config, JSON.stringify({ provider: { name: 1 } }))
    const { code, stderr } = await run(['serve', '--db', db, '--config', config])
    expect(code).toBe(2)
    expect(stderr).toContain('"provider.name" must be a string')
    await writeFile(config, '{ not json')
    expect((await run(['serve', '--db', db, '--config', config])).code).toBe(2)
    await writeFile(config, JSON.stringify({ provder: {} }))
    expect((await run(['serve', '--db', db, '--config', config])).stderr).toContain('unknown key "provder"')
  })

  it('a port in use is reported in plain words, and the database is closed again', async () => {
    const blocker = createServer()
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve))
    const { port } = blocker.address() as { port: number }
    try {
      const { code, stderr } = await run(['serve', '--db', db, '--port', String(port)])
      expect(code).toBe(1)
      expect(stderr).toContain(`cannot listen on 127.0.0.1:${port}: the port is in use`)
      const store = await PriceStore.open(db, { provider: DEFAULT_PROVIDER })
      await store.close()
    } finally {
      blocker.close()
    }
  })

  it('a database held by another process is reported in plain words', async () => {
    const holder = await PriceStore.open(db, { provider: DEFAULT_PROVIDER })
    try {
      const { code, stderr } = await run(['serve', '--db', db])
      expect(code).toBe(1)
      expect(stderr).toContain(`price-store serve: the database at ${db} is in use by another process`)
    } finally {
      await holder.close()
    }
  })

  it('bad options exit 2', async () => {
    expect((await run(['serve', '--port', '70000'])).code).toBe(2)
    expect((await run(['serve', '--port', 'http'])).code).toBe(2)
    expect((await run(['serve', '--bogus'])).code).toBe(2)
  })

  it('--help, and the top-level help', async () => {
    const serveHelp = await run(['serve', '--help'])
    expect(serveHelp.code).toBe(0)
    expect(serveHelp.stdout).toContain('--demo-if-empty')
    expect(serveHelp.stdout).toContain('--provider-public-key')
    const top = await run(['--help'])
    expect(top.code).toBe(0)
    expect(top.stdout).toContain('Commands:')
    const unknown = await run(['frobnicate'])
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toContain('unknown command "frobnicate"')
  })
})
