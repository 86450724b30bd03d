/**
 * The demo data set is signed with the published demo key: its private key
 * is keccak256 of the documented text, its address the one the docs print,
 * and every demo record's `liteEvmSignature` is the one RedStone's own
 * signing code (re-typed over elliptic in test/trust/support) makes with
 * that key. So `verify --recheck --evm-signer <demo address>` calls the demo
 * `valid`, a record changed after signing `invalid`, and without the flag
 * the demo's signer is not an allowed one.
 */
import { join } from 'node:path'
import { keccak_256 } from '@noble/hashes/sha3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DEFAULT_PROVIDER } from '../../src/cli/config.js'
import { demoLiteSignature } from '../../src/demo/demo-key.js'
import { DEMO_KEY_TEXT, DEMO_PRIVATE_KEY, DEMO_SIGNER, generateDemoRecords } from '../../src/demo/demo-data.js'
import { verifyRecord } from '../../src/trust/verify-record.js'
import { evmWallet, liteEvmSign } from '../trust/support/redstone-signers.js'
import { ndjson, run, tempDir, writeLines } from './helpers.js'

/** The address docs/cli.md and README.md print for the demo key (EIP-55 case). */
const DOCUMENTED_SIGNER = '0x2BAa99F11D400f8dC9C468023928d438D4e7A20e'
const providerId = DEFAULT_PROVIDER.id
const signers = { providers: [{ id: providerId, evmAddresses: [DOCUMENTED_SIGNER] }] }

let dir: string
let cleanup: () => Promise<void>
beforeAll(async () => {
  ;({ dir, cleanup } = await tempDir())
})
afterAll(async () => {
  await cleanup()
})

describe('the demo key', () => {
  it('is keccak256 of the documented text, and its address is the documented one', () => {
    expect(DEMO_KEY_TEXT).toBe('price-store demo key: published on purpose, signs only the demo data set')
    expect(DEMO_PRIVATE_KEY).toBe(Buffer.from(keccak_256(new TextEncoder().encode(DEMO_KEY_TEXT))).toString('hex'))
    expect(evmWallet(DEMO_PRIVATE_KEY).address).toBe(DOCUMENTED_SIGNER.toLowerCase())
    expect(DEMO_SIGNER).toBe(DOCUMENTED_SIGNER.toLowerCase())
  })

  it('signs each demo record as RedStone\'s signer does with that key, with either secp256k1 backend', () => {
    const wallet = evmWallet(DEMO_PRIVATE_KEY)
    const records = [...generateDemoRecords({ providerId, durationMs: 60_000 })]
    expect(records).toHaveLength(6 * 20)
    for (const record of records) {
      const expected = liteEvmSign(record, wallet)
      expect(record.liteEvmSignature).toBe(expected)
      expect(demoLiteSignature(record, 'noble')).toBe(expected)
      expect(demoLiteSignature(record, 'native')).toBe(expected)
      expect(Object.hasOwn(record, 'signature')).toBe(false)
    }
  })

  it('makes every demo record valid for the demo signer, and a tampered one invalid', () => {
    for (const record of generateDemoRecords({ providerId, durationMs: 60_000 })) {
      expect(verifyRecord(record, signers).overall).toBe('valid')
      expect(verifyRecord({ ...record, value: record.value * 1.01 }, signers).overall).toBe('invalid')
      expect(verifyRecord({ ...record, timestamp: record.timestamp + 1000 }, signers).overall).toBe('invalid')
      expect(verifyRecord(record, { providers: [{ id: providerId }] }).overall).toBe('signer-not-allowed')
    }
  })
})

describe('price-store verify --recheck on the demo', () => {
  it('calls the demo valid with --evm-signer <demo address>, and a tampered record invalid', async () => {
    const db = join(dir, 'db')
    expect((await run(['demo', '--db', db, '--days', '0.01'])).code).toBe(0)
    // 1,720 records (86 moments of 20 tokens); one more: the first BTC record's twin, its value changed after signing.
    const first = generateDemoRecords({ providerId, durationMs: 864_000 }).next().value!
    const forged = { ...first, id: 'forged-1', value: first.value + 1 }
    expect((await run(['import', '--db', db, await writeLines(dir, 'forged.ndjson', ndjson([forged]))])).code).toBe(0)

    const report = await run(['verify', '--db', db, '--recheck', '--evm-signer', DOCUMENTED_SIGNER, '--json'])
    expect(report.code).toBe(1)
    const json = JSON.parse(report.stdout) as { records: number; recheck: { verdicts: Record<string, number>; failing: { id: string }[] } }
    expect(json.records).toBe(1721)
    expect(json.recheck.verdicts).toMatchObject({ valid: 1720, invalid: 1, malformed: 0, 'signer-not-allowed': 0, unsigned: 0 })
    expect(json.recheck.failing.map((failing) => failing.id)).toEqual(['forged-1'])

    const table = await run(['verify', '--db', db, '--symbol', 'ETH', '--recheck', '--evm-signer', DOCUMENTED_SIGNER])
    expect(table.code).toBe(0)
    expect(table.stdout).toContain('rechecked   valid 86, invalid 0, malformed 0, signer-not-allowed 0, unsigned 0')

    const unknownSigner = await run(['verify', '--db', db, '--symbol', 'ETH', '--recheck', '--json'])
    expect((JSON.parse(unknownSigner.stdout) as { recheck: { verdicts: Record<string, number> } }).recheck.verdicts).toMatchObject({ valid: 0, 'signer-not-allowed': 86 })
  }, 60_000)
})
