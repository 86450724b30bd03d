/**
 * Signatures from the command line: `import --signatures reject` refuses a
 * batch with a bad signature at its FILE:LINE (exit 2), `--skip-bad` skips
 * it and goes on; `--signatures flag` keeps verdicts that `verify` reports
 * (a table, or --json, exit 1 when a record fails); `serve --signatures
 * reject` answers POST /prices with 400 PRICE_INVALID_SIGNATURE naming the
 * line. Records are signed in the test as RedStone's nodes signed them.
 */
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { arweaveSign, newArweaveWallet, type ArweaveWallet } from '../trust/support/redstone-signers.js'
import { ndjson, run, startServe, tempDir, writeLines } from './helpers.js'

const T0 = Date.parse('2024-06-01T00:00:00Z')
let wallet: ArweaveWallet
let providerFlags: string[]
let dir: string
let cleanup: () => Promise<void>
let databases = 0

beforeAll(async () => {
  wallet = await newArweaveWallet()
  providerFlags = [`--provider-id=${wallet.address}`, `--provider-public-key=${wallet.publicKey}`]
  ;({ dir, cleanup } = await tempDir())
}, 60_000)

afterAll(async () => {
  await cleanup()
})

async function signed(symbol: string, offset: number): Promise<Record<string, unknown>> {
  const record = {
    id: `${symbol}-${offset}`, symbol, provider: wallet.address, value: 100 + offset, permawebTx: 'tx', version: '0.4',
    source: { binance: 100 + offset }, timestamp: T0 + offset * 1000,
  }
  return { ...record, signature: await arweaveSign(record, wallet) }
}

/** Four records: lines 1, 2 and 4 signed, line 3 with its value changed after signing. */
async function inputFile(): Promise<string> {
  const records = [await signed('BTC', 0), await signed('BTC', 1), { ...(await signed('ETH', 0)), value: 1 }, await signed('ETH', 1)]
  return writeLines(dir, `input-${databases}.ndjson`, ndjson(records))
}

const newDb = (): string => join(dir, `db-${databases++}`)

describe('price-store import and verify with signatures', () => {
  it('import --signatures reject stops at the bad record\'s line; --skip-bad skips it', async () => {
    const file = await inputFile()
    const db = newDb()
    const refused = await run(['import', '--db', db, ...providerFlags, '--signatures', 'reject', file])
    expect(refused.code).toBe(2)
    expect(refused.stderr).toMatch(new RegExp(`${file}:3: bad record \\(field "signature"\\): its signature is invalid`))
    const skipped = await run(['import', '--db', db, ...providerFlags, '--signatures', 'reject', '--skip-bad', file])
    expect(skipped.code).toBe(0)
    expect(skipped.stderr).toMatch(/skipped .*:3: bad record/)
    const report = await run(['verify', '--db', db, ...providerFlags, '--json'])
    expect(report.code).toBe(0)
    expect(JSON.parse(report.stdout)).toMatchObject({ policy: 'off', records: 3, stored: { valid: 3, unchecked: 0 }, failing: [] })
  }, 60_000)

  it('import --signatures flag takes every record; verify lists the failing one and exits 1, --recheck agrees', async () => {
    const file = await inputFile()
    const db = newDb()
    expect((await run(['import', '--db', db, ...providerFlags, '--signatures', 'flag', file])).code).toBe(0)
    const table = await run(['verify', '--db', db, ...providerFlags, '--recheck'])
    expect(table.code).toBe(1)
    expect(table.stdout).toMatch(/^records {5}4$/m)
    expect(table.stdout).toMatch(/^as written {2}valid 3, invalid 1, malformed 0, signer-not-allowed 0, unsigned 0, unchecked 0$/m)
    expect(table.stdout).toMatch(/^rechecked {3}valid 3, invalid 1/m)
    expect(table.stdout).toMatch(/failing as written:\n {2}ETH {2}2024-06-01T00:00:00\.000Z {2}ETH-0 {2}arweave invalid/)
    expect(table.stdout).not.toMatch(/ALTERED/)
    const btc = await run(['verify', '--db', db, ...providerFlags, '--symbol', 'BTC', '--json'])
    expect(btc.code).toBe(0)
    expect(JSON.parse(btc.stdout)).toMatchObject({ records: 2, stored: { valid: 2 } })
  }, 60_000)

  it('refuses bad flags', async () => {
    const db = newDb()
    const policy = await run(['import', '--db', db, '--signatures', 'strict', 'x.ndjson'])
    expect(policy.code).toBe(2)
    expect(policy.stderr).toMatch(/--signatures must be off, flag or reject \(got "strict"\)/)
    const limit = await run(['verify', '--db', db, '--limit=-3'])
    expect(limit.code).toBe(2)
    expect(limit.stderr).toMatch(/--limit must be a whole number from 0 to 10000/)
  })

  it('serve --signatures reject answers POST /prices with 400 PRICE_INVALID_SIGNATURE naming the line', async () => {
    const db = newDb()
    const token = await writeLines(dir, `token-${databases}`, ['verify-test-token-0123456789abcdef'])
    const served = await startServe(['--db', db, ...providerFlags, '--signatures', 'reject', '--write-token-file', token])
    try {
      const body = `${ndjson([await signed('BTC', 0), { ...(await signed('BTC', 1)), source: {} }]).join('\n')}\n`
      const response = await fetch(served.endpoint, { method: 'POST', body, headers: { authorization: 'Bearer verify-test-token-0123456789abcdef', 'content-type': 'application/x-ndjson' } })
      expect(response.status).toBe(400)
      const answer = (await response.json()) as { error: Record<string, unknown> }
      expect(answer.error).toMatchObject({ code: 'PRICE_INVALID_SIGNATURE', index: 1, field: 'signature', line: 2 })
      expect(answer.error.message).toMatch(/^record 1 \(line 2\): its signature is invalid .*; nothing was written$/)
      const stats = (await (await fetch(served.endpoint.replace(/\/prices$/, '/stats'))).json()) as { records: number; signatures: unknown }
      expect(stats).toMatchObject({ records: 0, signatures: { policy: 'reject', rejectedBatches: 1, verdicts: { valid: 1, invalid: 1 } } })
    } finally {
      served.memory.signal()
      expect(await served.exit).toBe(0)
    }
  }, 60_000)
})
