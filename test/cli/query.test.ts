import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { toExactJson } from '../../src/engine/exact-json.js'
import { DEFAULT_PROVIDER } from '../../src/cli/config.js'
import { PriceStore } from '../../src/index.js'
import { run, tempDir } from './helpers.js'

let db: string
let cleanup: () => Promise<void>

beforeAll(async () => {
  const temp = await tempDir()
  cleanup = temp.cleanup
  db = join(temp.dir, 'db')
  expect((await run(['demo', '--db', db, '--days', '0.01'])).code).toBe(0)
})

afterAll(async () => {
  await cleanup()
})

/** What the library answers for the same parameters, serialized as the CLI and HTTP do. */
async function expected(query: string): Promise<string> {
  const store = await PriceStore.open(db, { provider: DEFAULT_PROVIDER })
  try {
    return `${toExactJson(await store.query(new URLSearchParams(query)))}\n`
  } finally {
    await store.close()
  }
}

describe('price-store query', () => {
  it('NAME=VALUE arguments: prints the JSON answer, one line', async () => {
    const { code, stdout, stderr } = await run(['query', '--db', db, 'symbol=BTC', 'limit=2'])
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' })
    expect(stdout).toBe(await expected('symbol=BTC&limit=2'))
    expect(JSON.parse(stdout)).toHaveLength(2)
  })

  it('an argument may be a whole query string, decoded like a URL', async () => {
    const { code, stdout } = await run(['query', '--db', db, 'symbols=BTC%2CUSDC.e&fromTimestamp=0'])
    expect(code).toBe(0)
    expect(Object.keys(JSON.parse(stdout))).toEqual(['BTC', 'USDC.e'])
  })

  it('--NAME VALUE flags work too, and every form is available', async () => {
    const [latest] = JSON.parse((await run(['query', '--db', db, '--symbol', 'ETH'])).stdout)
    const to = latest.timestamp as number
    const range = await run(['query', '--db', db, '--symbol', 'ETH', '--fromTimestamp', String(to - 600_000), '--toTimestamp', String(to), '--interval', '60000'])
    expect(range.code).toBe(0)
    expect(range.stdout).toBe(await expected(`symbol=ETH&fromTimestamp=${to - 600_000}&toTimestamp=${to}&interval=60000`))
    const all = await run(['query', '--db', db])
    expect(Object.keys(JSON.parse(all.stdout))).toHaveLength(20)
  })

  it('--pretty indents', async () => {
    const { stdout } = await run(['query', '--db', db, '--pretty', 'symbol=AR'])
    expect(stdout.startsWith('[\n  {\n    "id": ')).toBe(true)
    expect(JSON.parse(stdout)).toEqual(JSON.parse(await expected('symbol=AR')))
  })

  it.each([
    [['symbol=BTC', 'limit=abc'], 'PRICE_INVALID_QUERY'],
    [['--limit', '1', '--limit', '2', 'symbol=BTC'], 'PRICE_INVALID_QUERY'],
    [['symbol=BTC', 'symbol=ETH'], 'PRICE_INVALID_QUERY'],
    [['symbol='], 'PRICE_INVALID_SYMBOL'],
    [['symbol=BTC', 'provider=nobody'], 'PRICE_UNSUPPORTED_PROVIDER'],
    [['interval=5'], 'PRICE_INVALID_INTERVAL'],
  ])('an invalid query %j exits 2 with the code: %s', async (args, code) => {
    const result = await run(['query', '--db', db, ...args])
    expect(result.code).toBe(2)
    expect(result.stdout).toBe('')
    expect(result.stderr).toContain(`[${code}]`)
  })

  it('a bare word is a usage error', async () => {
    const { code, stderr } = await run(['query', '--db', db, 'BTC'])
    expect(code).toBe(2)
    expect(stderr).toContain('expected NAME=VALUE')
  })

  it('a missing database is an error, not a new empty one', async () => {
    const { code, stderr } = await run(['query', '--db', join(db, 'nope'), 'symbol=BTC'])
    expect(code).toBe(1)
    expect(stderr).toContain('there is no database at')
  })

  it('--help lists the parameters', async () => {
    const { code, stdout } = await run(['query', '--help'])
    expect(code).toBe(0)
    expect(stdout).toContain('fromTimestamp')
  })
})
