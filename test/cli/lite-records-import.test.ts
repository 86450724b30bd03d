/**
 * RedStone's records as its API served them (a `liteEvmSignature`, no Arweave
 * `signature`) through `price-store import`, with the README's own
 * `--signatures reject --evm-signer` line: imported, `verify` finds them all
 * valid, and `query` and `export` give back each record's fields as written
 * (no `signature`; CSV leaves its cell empty). A tampered copy stops the
 * import at its line for its lite signature, a record with no signature at
 * all for `signature`; neither writes anything.
 */
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { LITE_RECORDS, LITE_SIGNER, asLatestReturns, tampered, unsigned } from '../trust/support/lite-fixture.js'
import { ndjson, run, storedIds, tempDir, writeLines } from './helpers.js'

let dir: string
let cleanup: () => Promise<void>
let databases = 0
const newDb = (): string => join(dir, `db-${databases++}`)
const REJECT = ['--signatures', 'reject', '--evm-signer', LITE_SIGNER]

beforeAll(async () => {
  ;({ dir, cleanup } = await tempDir())
})

afterAll(async () => {
  await cleanup()
})

describe('price-store import of records signed by liteEvmSignature only', () => {
  it('imports the fixture under reject with RedStone\'s lite signer; verify, query and export give them back as written', async () => {
    const file = await writeLines(dir, 'lite.ndjson', ndjson(LITE_RECORDS))
    const db = newDb()
    const imported = await run(['import', '--db', db, ...REJECT, file])
    expect(imported.stderr).not.toMatch(/bad record/)
    expect(imported.code).toBe(0)

    const report = await run(['verify', '--db', db, ...REJECT, '--recheck', '--json'])
    expect(report.code).toBe(0)
    expect(JSON.parse(report.stdout)).toMatchObject({ records: 5, stored: { valid: 5, unchecked: 0 }, failing: [], recheck: { verdicts: { valid: 5 }, altered: [] } })

    for (const record of LITE_RECORDS) {
      const queried = await run(['query', '--db', db, `symbol=${String(record['symbol'])}&toTimestamp=${String(record['timestamp'])}`])
      expect(queried.code).toBe(0)
      expect(JSON.parse(queried.stdout)).toStrictEqual([asLatestReturns(record)])
    }

    const exported = await run(['export', '--db', db])
    expect(exported.code).toBe(0)
    const lines = exported.stdout.trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>)
    expect(lines).toHaveLength(5)
    for (const line of lines) expect(line).toStrictEqual(asLatestReturns(LITE_RECORDS.find((record) => record['id'] === line['id'])!))

    // Exported NDJSON imports back: the same records, verified again.
    const again = newDb()
    const reimported = await run(['import', '--db', again, ...REJECT, await writeLines(dir, 'lite-export.ndjson', exported.stdout.trim().split('\n'))])
    expect(reimported.code).toBe(0)
    expect(await storedIds(again)).toEqual(await storedIds(db))

    const csv = await run(['export', '--db', db, '--format', 'csv', '--symbol', 'STX'])
    expect(csv.code).toBe(0)
    const [header, row] = csv.stdout.split('\r\n')
    expect(header).toBe('id,symbol,provider,value,signature,permawebTx,version,source,timestamp,extra')
    const stx = LITE_RECORDS.find((record) => record['symbol'] === 'STX')!
    // The signature cell is empty; the lite signature is an extra field.
    expect(row).toMatch(new RegExp(`^${String(stx['id'])},STX,${String(stx['provider'])},${String(stx['value'])},,mock-permaweb-tx,0\\.4,`))
    expect(row).toContain(String(stx['liteEvmSignature']))
  })

  it('stops at a tampered copy\'s line for its lite signature, and at a record with no signature for signature; nothing written', async () => {
    const tamperedFile = await writeLines(dir, 'tampered.ndjson', ndjson([LITE_RECORDS[0], tampered(LITE_RECORDS[1]!), LITE_RECORDS[2]]))
    const db = newDb()
    const refused = await run(['import', '--db', db, ...REJECT, tamperedFile])
    expect(refused.code).toBe(2)
    expect(refused.stderr).toMatch(new RegExp(`${tamperedFile}:2: bad record \\(field "liteEvmSignature"\\): its liteEvmSignature is invalid`))
    expect(await storedIds(db)).toEqual({})

    const unsignedFile = await writeLines(dir, 'unsigned.ndjson', ndjson([LITE_RECORDS[0], unsigned(LITE_RECORDS[1]!)]))
    const none = await run(['import', '--db', db, unsignedFile])
    expect(none.code).toBe(2)
    expect(none.stderr).toMatch(new RegExp(`${unsignedFile}:2: bad record \\(field "signature"\\): signature is missing, and the record carries no liteEvmSignature or evmSignature`))
    expect(await storedIds(db)).toEqual({})
  })
})
