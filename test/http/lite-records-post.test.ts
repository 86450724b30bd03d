/**
 * RedStone's records as its API served them (a `liteEvmSignature`, no Arweave
 * `signature`) through `POST /prices` on a real server whose store verifies
 * under `reject` with RedStone's lite signer: taken, and served by
 * `GET /prices` (every record's JSON, field for field, as written: no
 * `signature` appears); a tampered copy gets 400 `PRICE_INVALID_SIGNATURE`
 * naming the lite signature, and a record with no signature of any kind 400
 * `PRICE_INVALID_RECORD`, each with nothing written.
 */
import { MemoryLevel } from 'memory-level'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type RunningServer } from '../../src/adapters/http/node.js'
import { PriceStore } from '../../src/index.js'
import { LITE_PROVIDER, LITE_RECORDS, LITE_SIGNER, asLatestReturns, tampered, unsigned } from '../trust/support/lite-fixture.js'

const TOKEN = 'tk_lite_5e0b9c2a7d4f41e8b6c3a9d0f2e7b1c4'
let store: PriceStore
let running: RunningServer

beforeAll(async () => {
  store = await PriceStore.open(new MemoryLevel(), { provider: LITE_PROVIDER, signatures: { policy: 'reject', evmSigners: [LITE_SIGNER], threads: 1 } })
  running = await startServer({ store, writeToken: TOKEN })
})

afterAll(async () => {
  await running.close()
  await store.close()
})

async function post(records: readonly object[]): Promise<{ status: number; body: any }> {
  const res = await fetch(`${running.url}/prices`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/x-ndjson' },
    body: records.map((record) => JSON.stringify(record)).join('\n') + '\n',
  })
  return { status: res.status, body: await res.json() }
}

async function get(query: string): Promise<{ text: string; body: any }> {
  const res = await fetch(`${running.url}/prices?${query}`)
  expect(res.status).toBe(200)
  const text = await res.text()
  return { text, body: JSON.parse(text) }
}

const symbols = [...new Set(LITE_RECORDS.map((record) => record['symbol'] as string))]

describe('POST /prices with records signed by liteEvmSignature only', () => {
  it('refuses a tampered copy for its lite signature, and a record with no signature at all; nothing written', async () => {
    const bad = await post([LITE_RECORDS[0] as object, tampered(LITE_RECORDS[1] as Record<string, unknown>)])
    expect(bad.status).toBe(400)
    expect(bad.body.error).toMatchObject({ code: 'PRICE_INVALID_SIGNATURE', index: 1, field: 'liteEvmSignature', line: 2 })
    expect(bad.body.error.message).toMatch(/its liteEvmSignature is invalid/)

    const none = await post([LITE_RECORDS[0] as object, unsigned(LITE_RECORDS[2] as Record<string, unknown>)])
    expect(none.status).toBe(400)
    expect(none.body.error).toMatchObject({ code: 'PRICE_INVALID_RECORD', index: 1, field: 'signature', line: 2 })

    for (const symbol of symbols) expect((await get(`symbol=${symbol}&provider=redstone`)).body).toEqual([])
  })

  it('takes the fixture as valid and serves each record with exactly the fields written', async () => {
    const validBefore = store.signatures.verdicts.valid
    const taken = await post(LITE_RECORDS)
    expect(taken.status).toBe(200)
    expect(taken.body.stored).toBe(5)
    expect(store.signatures.verdicts.valid - validBefore).toBe(5)

    for (const record of LITE_RECORDS) {
      const { symbol, timestamp } = record as { symbol: string; timestamp: number }
      const expected = asLatestReturns(record)
      const latest = await get(`symbol=${symbol}&provider=redstone&toTimestamp=${timestamp}`)
      expect(latest.body).toHaveLength(1)
      expect(Object.keys(latest.body[0]).sort()).toEqual(Object.keys(expected).sort())
      expect(latest.body[0]).toStrictEqual(expected)
      expect(latest.text).not.toContain('"signature"')

      const range = await get(`symbol=${symbol}&provider=redstone&fromTimestamp=${timestamp}&toTimestamp=${timestamp}&interval=60000`)
      expect(range.body).toStrictEqual([{ ...expected, minutes: record['minutes'] }])
    }

    const several = await get(`symbols=${symbols.join(',')}&provider=redstone`)
    expect(several.text).not.toContain('"signature"')
    for (const symbol of symbols) expect(several.body[symbol].liteEvmSignature).toMatch(/^0x[0-9a-f]{130}$/)

    const history = await get('symbol=BTC&provider=redstone&limit=10')
    expect(history.body.map((record: { id: string }) => record.id).sort())
      .toEqual(LITE_RECORDS.filter((record) => record['symbol'] === 'BTC').map((record) => record['id']).sort())
    expect(history.text).not.toContain('"signature"')
  })
})
