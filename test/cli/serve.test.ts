import { readFile, stat, writeFile } from 'node:fs/promises'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { DEFAULT_PROVIDER } from '../../src/cli/config.js'
import { DEMO_MARKER } from '../../src/cli/demo-marker.js'
import { PriceStore } from '../../src/index.js'
import { openSse } from '../support/http/sse-client.js'
import { demoDbForFile, rawContents, record, run, setStoredFormat, startServe } from './helpers.js'

let dir: string
let db: string
demoDbForFile((newDir, newDb) => {
  dir = newDir
  db = newDb
})

describe('price-store serve', () => {
  it('prints the URL and three example queries that answer; SIGINT stops it cleanly with exit 0', async () => {
    const { memory, exit, banner, endpoint, examples } = await startServe(['--db', db, '--demo-if-empty'])
    expect(banner).toContain(`price-store is serving 20 symbols from ${db}`)
    expect(banner).toContain(`\n  ${endpoint.slice(0, -'prices'.length)} shows charts (TradingView UDF at /udf/)\n`)
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
  // test/http/server.test.ts ("graceful close"), where a gated store holds one open.

  it('takes the provider from --config, flags overriding it', async () => {
    const config = join(dir, 'config.json')
    await writeFile(config, JSON.stringify({ provider: { name: 'my-node', id: DEFAULT_PROVIDER.id, publicKey: 'from-config' }, limits: { maxLimit: 5 } }))
    // A store belongs to the provider it was created for: this one is written with the key the flag will give.
    const own = join(dir, 'own-key')
    expect((await run(['demo', '--db', own, '--days', '0.01', '--provider-public-key', 'from-flag'])).code).toBe(0)
    const { memory, exit, endpoint } = await startServe(['--db', own, '--config', config, '--provider-public-key', 'from-flag'])
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

  it('serves the live stream with --max-stream-subscribers and --stream-heartbeat-ms; SIGINT ends it with an end event', async () => {
    const { memory, exit, banner, endpoint } = await startServe(['--db', db, '--max-stream-subscribers', '1', '--stream-heartbeat-ms', '20'])
    expect(banner).toContain(`\n  ${endpoint}/stream streams commits live (Server-Sent Events)\n`)
    const sse = await openSse(`${endpoint}/stream?symbols=BTC`)
    try {
      expect(sse.response.status).toBe(200)
      expect((await sse.until('ready')).at(-1)?.event).toBe('ready')
      const refused = await fetch(`${endpoint}/stream`)
      expect(refused.status).toBe(503)
      expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('HTTP_BUSY')
      const next = sse.next()
      for (let i = 0; i < 1_000 && sse.comments() === 0; i++) await new Promise((resolve) => setTimeout(resolve, 5))
      expect(sse.comments()).toBeGreaterThan(0)
      memory.signal('SIGINT')
      expect((await next)?.event).toBe('end')
      expect(await exit).toBe(0)
    } finally {
      await sse.close()
    }
  })

  it('refuses a bad --max-stream-subscribers with exit 2', async () => {
    const { code, stderr } = await run(['serve', '--db', db, '--port', '0', '--max-stream-subscribers', 'many'])
    expect(code).toBe(2)
    expect(stderr).toContain('--max-stream-subscribers')
  })

  it('a store created for another provider is refused in plain words, and left as it was', async () => {
    const before = await rawContents(db)
    const { code, stderr } = await run(['serve', '--db', db, '--port', '0', '--provider-public-key', 'from-flag'])
    expect(code).toBe(1)
    expect(stderr).toContain(`price-store serve: the database at ${db} was created for another provider`)
    expect(stderr).toContain('with public key "from-flag"; the public key differs')
    expect(stderr).toContain('[PRICE_PROVIDER_MISMATCH]')
    expect(await rawContents(db)).toEqual(before)
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

  it('a port in use is reported in plain words with the npm start form of the hint, and the database is closed again', async () => {
    const blocker = createServer()
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve))
    const { port } = blocker.address() as { port: number }
    try {
      const { code, stderr } = await run(['serve', '--db', db, '--port', String(port)])
      expect(code).toBe(1)
      // The hint names a port to try, also in the form people who started with "npm start" need.
      const next = port === 65_535 ? port - 1 : port + 1
      expect(stderr).toContain(`cannot listen on 127.0.0.1:${port}: the port is in use; choose another with --port ${next}`)
      expect(stderr).toContain(`(with npm start: npm start -- --port ${next})`)
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

/** Serves `db` in-process with `args`; `stop()` sends the shutdown signal and resolves with the exit code. */
async function serveDb(args: readonly string[]) {
  const { endpoint, memory, exit } = await startServe(['--db', db, ...args])
  return { endpoint, stop: async () => (memory.signal(), await exit) }
}

const status = async (url: string): Promise<number> => (await fetch(url)).status

describe('price-store serve: the store limits as flags', () => {
  it('--max-limit, --max-symbols and --max-range-points cap the answers; flags win over the config file', async () => {
    const config = join(dir, 'limits.json')
    await writeFile(config, JSON.stringify({ limits: { maxLimit: 100, maxSymbols: 100, maxRangePoints: 100 } }))
    const { endpoint, stop } = await serveDb(['--config', config, '--max-limit', '5', '--max-symbols', '2', '--max-range-points', '10'])
    try {
      expect(await status(`${endpoint}?symbol=BTC&limit=5`)).toBe(200)
      expect(await status(`${endpoint}?symbol=BTC&limit=6`)).toBe(400)
      expect(await status(`${endpoint}?symbols=BTC,ETH`)).toBe(200)
      expect(await status(`${endpoint}?symbols=BTC,ETH,AR`)).toBe(400)
      const to = 1717200000000
      expect(await status(`${endpoint}?symbol=BTC&fromTimestamp=${to - 9 * 60_000}&toTimestamp=${to}&interval=60000`)).toBe(200)
      expect(await status(`${endpoint}?symbol=BTC&fromTimestamp=${to - 20 * 60_000}&toTimestamp=${to}&interval=60000`)).toBe(400)
    } finally {
      expect(await stop()).toBe(0)
    }
  })

  it.each(['--max-limit', '--max-symbols', '--max-range-points'])('%s with a bad value: one line naming the flag, exit 2', async (flag) => {
    for (const value of ['0', 'many', '1e3', '1.5']) {
      const { code, stdout, stderr } = await run(['serve', '--db', db, flag, value])
      expect({ code, stdout }).toEqual({ code: 2, stdout: '' })
      expect(stderr).toMatch(new RegExp(`^price-store serve: ${flag} must be a whole number from 1 to [\\d]+ \\(got ${JSON.stringify(value)}\\); see "price-store serve --help"\\n$`))
    }
  })

  it('--help shows the three limits with their defaults', async () => {
    const { stdout } = await run(['serve', '--help'])
    expect(stdout).toMatch(/--max-limit N\s+.*default 3000/)
    expect(stdout).toMatch(/--max-symbols N\s+.*default 1000/)
    expect(stdout).toMatch(/--max-range-points N\s+.*default 10000/)
  })
})

describe('price-store serve --demo-if-empty on a database of another format', () => {
  it('a demo database (marked by "price-store demo") is deleted and the demo data written again', async () => {
    const demo = join(dir, 'marked-demo')
    expect((await run(['demo', '--db', demo, '--days', '0.01'])).code).toBe(0)
    expect(JSON.parse(await readFile(join(demo, DEMO_MARKER), 'utf8'))).toMatchObject({ demo: true, writtenBy: 'price-store demo' })
    await setStoredFormat(demo, '2')
    const { memory, exit, banner } = await startServe(['--db', demo, '--demo-if-empty'])
    try {
      expect(memory.stderr()).toContain(`the demo database at ${demo} is in format "2", written by another version of price-store`)
      expect(memory.stderr()).toContain('deleting it to write the demo data again')
      expect(memory.stderr()).toContain('is empty: writing the demo data set')
      expect(banner).toContain(`price-store is serving 20 symbols from ${demo}`)
    } finally {
      memory.signal()
      expect(await exit).toBe(0)
    }
    // Rebuilt in this format, with the whole default demo set, and still known as a demo.
    const store = await PriceStore.open(demo, { provider: DEFAULT_PROVIDER })
    try {
      expect(await store.latest('USDC.e', { limit: 3000 })).toHaveLength(3000)
    } finally {
      await store.close()
    }
    expect(JSON.parse(await readFile(join(demo, DEMO_MARKER), 'utf8'))).toMatchObject({ demo: true, writtenBy: 'price-store serve --demo-if-empty' })
  }, 120_000)

  it('a database holding someone\'s records is left untouched, with plain words on how to rebuild it', async () => {
    const own = join(dir, 'own-records')
    expect((await run(['demo', '--db', own, '--days', '0.001'])).code).toBe(0)
    // Importing records makes it the user's: no longer a demo to rebuild.
    const file = join(dir, 'one.ndjson')
    await writeFile(file, `${JSON.stringify(record('MINE', 1_700_000_000_000))}\n`)
    expect((await run(['import', '--db', own, file])).code).toBe(0)
    await expect(stat(join(own, DEMO_MARKER))).rejects.toThrow()
    await setStoredFormat(own, '2')
    const before = await rawContents(own)
    const { code, stdout, stderr } = await run(['serve', '--db', own, '--port', '0', '--demo-if-empty'])
    expect({ code, stdout }).toEqual({ code: 1, stdout: '' })
    expect(stderr).toContain(`price-store serve: the database at ${own} is in format "2"`)
    expect(stderr).toContain('It is not the demo database')
    expect(stderr).toContain('so --demo-if-empty left it untouched')
    expect(stderr).toContain(`price-store export --db ${own} > records.ndjson`)
    expect(stderr).toContain('price-store import --db NEW_DIR [provider flags] records.ndjson')
    expect(stderr).toContain('[PRICE_UNSUPPORTED_FORMAT]')
    expect(await rawContents(own)).toEqual(before)
  })

  it('without --demo-if-empty even a demo database is only reported, not rebuilt', async () => {
    const demo = join(dir, 'kept-demo')
    expect((await run(['demo', '--db', demo, '--days', '0.001'])).code).toBe(0)
    await setStoredFormat(demo, '2')
    const before = await rawContents(demo)
    const { code, stderr } = await run(['serve', '--db', demo, '--port', '0'])
    expect(code).toBe(1)
    expect(stderr).toContain(`the database at ${demo} is in format "2"`)
    expect(stderr).toContain('"npm start" ("price-store serve --demo-if-empty") rebuilds it by itself')
    expect(await rawContents(demo)).toEqual(before)
  })
})
