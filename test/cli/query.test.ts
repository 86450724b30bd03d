import { createHash } from 'node:crypto'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { toExactJson } from '../../src/rules/exact-json.js'
import { DEFAULT_PROVIDER } from '../../src/cli/config.js'
import { PriceStore } from '../../src/index.js'
import { rawContents, run, setStoredFormat, tempDir } from './helpers.js'

let db: string
let tmp: string
let cleanup: () => Promise<void>

beforeAll(async () => {
  const temp = await tempDir()
  cleanup = temp.cleanup
  tmp = temp.dir
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

  it('provider aliases: --provider-alias and "aliases" in --config make another name for the provider acceptable', async () => {
    const refused = await run(['query', '--db', db, 'symbol=BTC', 'provider=redstone-rapid'])
    expect(refused.code).toBe(2)
    expect(refused.stderr).toContain('PRICE_UNSUPPORTED_PROVIDER')
    const flagged = await run(['query', '--db', db, '--provider-alias', 'redstone-rapid', 'symbol=BTC', 'provider=redstone-rapid'])
    expect({ code: flagged.code, stdout: flagged.stdout }).toEqual({ code: 0, stdout: await expected('symbol=BTC') })
    const config = join(tmp, 'aliases.json')
    await writeFile(config, JSON.stringify({ provider: { aliases: ['redstone-rapid'] } }))
    const configured = await run(['query', '--db', db, '--config', config, 'symbol=BTC', 'provider=redstone-rapid'])
    expect({ code: configured.code, stdout: configured.stdout }).toEqual({ code: 0, stdout: await expected('symbol=BTC') })
    await writeFile(config, JSON.stringify({ provider: { aliases: 'redstone-rapid' } }))
    const bad = await run(['query', '--db', db, '--config', config, 'symbol=BTC'])
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain('"provider.aliases" must be an array of strings')
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

describe('price-store query on a store it cannot open as asked', () => {
  const KEY = DEFAULT_PROVIDER.publicKey

  it('another provider id: exit 1 and plain words naming the stored and the given provider, what differs and what to do', async () => {
    const before = await rawContents(db)
    const { code, stdout, stderr } = await run(['query', '--db', db, '--provider-id', 'my-own-node', '--provider-public-key', 'some-key', 'symbol=BTC'])
    expect({ code, stdout }).toEqual({ code: 1, stdout: '' })
    expect(stderr).toContain(`price-store query: the database at ${db} was created for another provider`)
    expect(stderr).toContain(`provider id ${JSON.stringify(DEFAULT_PROVIDER.id)}`)
    expect(stderr).toContain('"my-own-node"')
    expect(stderr).toContain('the id and public key differ')
    expect(stderr).toContain('Leave out the provider flags')
    expect(stderr).toContain('[PRICE_PROVIDER_MISMATCH]')
    // The long default key is named by a fingerprint (sha256 of the key, 8 hex digits), and the message is one line.
    const fingerprint = createHash('sha256').update(KEY).digest('hex').slice(0, 8)
    expect(stderr).toContain(`with public key sha256:${fingerprint}`)
    expect(stderr).not.toContain(KEY)
    expect(stderr.trimEnd().split('\n')).toHaveLength(1)
    // Nothing changed: the right provider still reads it.
    expect(await rawContents(db)).toEqual(before)
    expect((await run(['query', '--db', db, 'symbol=BTC'])).stdout).toBe(await expected('symbol=BTC'))
  })

  it('another public key, from --config, and both at once', async () => {
    const onlyKey = await run(['query', '--db', db, '--provider-public-key', 'short-key', 'symbol=BTC'])
    expect(onlyKey.code).toBe(1)
    expect(onlyKey.stderr).toContain('was given provider id')
    expect(onlyKey.stderr).toContain('with public key "short-key"; the public key differs')
    expect(onlyKey.stderr).toContain('the public key differs')
    const config = join(tmp, 'other-provider.json')
    await writeFile(config, JSON.stringify({ provider: { name: 'mine', id: 'mine-id', publicKey: 'mine-key' } }))
    const both = await run(['query', '--db', db, '--config', config, 'symbol=BTC'])
    expect(both.code).toBe(1)
    expect(both.stderr).toContain('was given provider id "mine-id" with public key "mine-key"; the id and public key differ')
  })

  it('a store of an older format: exit 1 and plain words on how to rebuild it, the store untouched', async () => {
    const old = join(tmp, 'old-format')
    expect((await run(['import', '--db', old, '-'], { stdin: '' })).code).toBe(0)
    await setStoredFormat(old, '2')
    const before = await rawContents(old)
    const { code, stderr } = await run(['query', '--db', old, 'symbol=BTC'])
    expect(code).toBe(1)
    expect(stderr).toContain(`the database at ${old} is in format "2", written by another version of price-store`)
    expect(stderr).toContain(`price-store export --db ${old} > records.ndjson`)
    expect(stderr).toContain('price-store import --db NEW_DIR [provider flags] records.ndjson')
    expect(stderr).toContain('[PRICE_UNSUPPORTED_FORMAT]')
    expect(await rawContents(old)).toEqual(before)
  })
})
