/**
 * `price-store feeds`: --json prints what store.feeds() gives (every page
 * joined, or one page with --limit and --cursor); the table; --url asks a
 * running server's GET /feeds for the same catalogue, and its refusals come
 * back as the CLI's errors; bad flags exit 2 naming the flag.
 */
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type RunningServer } from '../../src/adapters/http/node.js'
import { DEFAULT_PROVIDER } from '../../src/cli/config.js'
import { PriceStore } from '../../src/index.js'
import { record, run, tempDir } from './helpers.js'

const BASE = Date.UTC(2026, 0, 1)
const NOW = BASE + 3_600_000
let db: string
let cleanup: () => Promise<void>
// AR every 10 s for an hour (live at NOW); BTC every minute, stopped half an hour before NOW (stale); OLD a month before (retired).
const inputs = [
  ...Array.from({ length: 360 }, (_, i) => record('AR', BASE + i * 10_000, { value: 10 + i / 100 })),
  ...Array.from({ length: 30 }, (_, i) => record('BTC', BASE + i * 60_000, { value: 40_000.5 })),
  ...Array.from({ length: 5 }, (_, i) => record('OLD', BASE - 30 * 86_400_000 + i * 1000, { value: 1 })),
]

beforeAll(async () => {
  const temp = await tempDir()
  cleanup = temp.cleanup
  db = join(temp.dir, 'db')
  const store = await PriceStore.open(db, { provider: DEFAULT_PROVIDER })
  await store.putMany(inputs as never)
  await store.close()
})

afterAll(async () => {
  await cleanup?.()
})

/** What the store itself answers for `options`. */
async function fromStore<T>(read: (store: PriceStore) => Promise<T>): Promise<T> {
  const store = await PriceStore.open(db, { provider: DEFAULT_PROVIDER })
  try {
    return await read(store)
  } finally {
    await store.close()
  }
}

describe('price-store feeds', () => {
  it('--json prints the catalogue store.feeds() gives', async () => {
    const { code, stdout, stderr } = await run(['feeds', '--db', db, '--now', String(NOW), '--json'])
    expect(stderr).toBe('')
    expect(code).toBe(0)
    const want = await fromStore((store) => store.feeds({ now: NOW }))
    expect(JSON.parse(stdout)).toEqual(JSON.parse(JSON.stringify(want)))
    expect(want.feeds.map((f) => [f.symbol, f.status, f.records, f.heartbeat, f.decimals])).toEqual([
      ['AR', 'live', 360, 10_000, 2], ['BTC', 'stale', 30, 60_000, 1], ['OLD', 'retired', 5, 1000, 0],
    ])
  })

  it('--limit prints one page and its cursor; --cursor the next; --status and the thresholds are passed on', async () => {
    const first = JSON.parse((await run(['feeds', '--db', db, '--now', String(NOW), '--limit', '2', '--json'])).stdout)
    expect(first.feeds.map((f: { symbol: string }) => f.symbol)).toEqual(['AR', 'BTC'])
    expect(first.next).toBe('BTC')
    const second = JSON.parse((await run(['feeds', '--db', db, '--now', String(NOW), '--limit', '2', '--cursor', 'BTC', '--json'])).stdout)
    expect(second).toMatchObject({ feeds: [{ symbol: 'OLD' }], next: null })
    const options = { now: NOW, status: 'live', staleAfter: 200, retiredAfter: 86_400_000 } as const
    const live = JSON.parse((await run(['feeds', '--db', db, '--now', String(NOW), '--status', 'live', '--stale-after', '200', '--retired-after', '86400000', '--json'])).stdout)
    expect(live).toEqual(JSON.parse(JSON.stringify(await fromStore((store) => store.feeds(options)))))
    expect(live.feeds.map((f: { symbol: string }) => f.symbol)).toEqual(['AR', 'BTC'])
  })

  it('prints a table', async () => {
    const { code, stdout } = await run(['feeds', '--db', db, '--now', String(NOW)])
    expect(code).toBe(0)
    const lines = stdout.split('\n')
    expect(lines[0]).toBe(`price-store feeds: ${db}`)
    expect(lines).toContain('statuses   stale after 3 heartbeats, retired after 7d')
    expect(lines).toContainEqual(expect.stringMatching(/^symbol +status +records +first +last +age +heartbeat +decimals +verdicts \(newest\)$/))
    expect(lines).toContainEqual(expect.stringMatching(/^AR +live +360 +2026-01-01T00:00:00.000Z +2026-01-01T00:59:50.000Z +10s +10s +2 +32 unchecked$/))
    expect(lines).toContainEqual(expect.stringMatching(/^BTC +stale +30 .* +31m +1m +1 +30 unchecked$/))
    expect(lines).toContainEqual(expect.stringMatching(/^OLD +retired +5 /))
    const signed = await run(['feeds', '--db', db, '--now', String(NOW), '--evm-signer', '0x2BAa99F11D400f8dC9C468023928d438D4e7A20e'])
    expect(signed.stdout.split('\n')).toContain('signers    0x2baa99f11d400f8dc9c468023928d438d4e7a20e')
    const page = await run(['feeds', '--db', db, '--now', String(NOW), '--limit', '1'])
    expect(page.stdout).toContain('feeds      1 of 3')
    expect(page.stdout).toContain('next page: --cursor "AR"')
  })

  it('--url asks a running server for the same catalogue, and reports its refusals', async () => {
    const store = await PriceStore.open(db, { provider: DEFAULT_PROVIDER })
    let server: RunningServer | undefined
    try {
      server = await startServer({ store })
      const local = await store.feeds({ now: NOW })
      const remote = await run(['feeds', '--url', server.url, '--now', String(NOW), '--json'])
      expect(remote.stderr).toBe('')
      expect(JSON.parse(remote.stdout)).toEqual(JSON.parse(JSON.stringify(local)))
      const paged = await run(['feeds', '--url', `${server.url}/`, '--now', String(NOW), '--limit', '1', '--cursor', 'AR', '--json'])
      expect(JSON.parse(paged.stdout)).toMatchObject({ feeds: [{ symbol: 'BTC' }], next: 'BTC' })
      const refused = await run(['feeds', '--url', server.url, '--cursor', 'x'.repeat(1001)])
      expect(refused.code).toBe(2)
      expect(refused.stderr).toMatch(/answered 400: .*cursor.* \[PRICE_INVALID_QUERY\]/)
    } finally {
      await server?.close()
      await store.close()
    }
  })

  it.each([
    [['--status', 'dead'], /--status must be live, stale or retired \(got "dead"\)/],
    [['--limit', '0'], /--limit must be a whole number from 1 to 1000 \(got "0"\)/],
    [['--stale-after', '0'], /--stale-after must be a number of heartbeats above 0/],
    [['--retired-after', '1.5'], /--retired-after must be a whole number/],
    [['--now', 'soon'], /--now/],
    [['--url', 'ftp://x'], /--url must start with http/],
  ])('%j exits 2 naming the flag', async (flags, message) => {
    const { code, stderr } = await run(['feeds', '--db', db, ...flags])
    expect(code).toBe(2)
    expect(stderr).toMatch(message)
  })

  it('an unreachable server exits 1', async () => {
    const { code, stderr } = await run(['feeds', '--url', 'http://127.0.0.1:9'])
    expect(code).toBe(1)
    expect(stderr).toMatch(/cannot reach http:\/\/127.0.0.1:9/)
  })
})
