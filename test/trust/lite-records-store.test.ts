/**
 * RedStone's records as its API served them (a `liteEvmSignature`, no Arweave
 * `signature`) through the library: taken as `valid` under the `reject`
 * policy with RedStone's lite signer, and read back by every query form and
 * the export with exactly the fields they were written with. A tampered
 * copy is refused for its lite signature, and a record carrying no
 * signature of any kind is refused; neither writes anything.
 */
import { MemoryLevel } from 'memory-level'
import { afterEach, describe, expect, it } from 'vitest'
import { answerPrices } from '../../src/http.js'
import { PriceStore } from '../../src/index.js'
import type { SignatureOptions } from '../../src/trust.js'
import { rejectsCode } from '../support/assertions.js'
import { LITE_PROVIDER, LITE_RECORDS, LITE_SIGNER, asLatestReturns, tampered, unsigned } from './support/lite-fixture.js'

const REJECT: SignatureOptions = { policy: 'reject', evmSigners: [LITE_SIGNER], threads: 1 }
const stores: PriceStore[] = []

async function open(signatures?: SignatureOptions): Promise<PriceStore> {
  const store = await PriceStore.open(new MemoryLevel(), { provider: LITE_PROVIDER, ...(signatures === undefined ? {} : { signatures }) })
  stores.push(store)
  return store
}

afterEach(async () => {
  await Promise.all(stores.splice(0).map(async (store) => store.close()))
})

/** `got` has exactly the fields of `expected`, with equal values (no field more, none less, none `undefined`). */
function expectSameFields(got: unknown, expected: Readonly<Record<string, unknown>>): void {
  expect(Object.keys(got as object).sort()).toEqual(Object.keys(expected).sort())
  expect(got).toStrictEqual(expected)
}

const byId = (id: unknown): Readonly<Record<string, unknown>> => LITE_RECORDS.find((record) => record['id'] === id) as Readonly<Record<string, unknown>>
const symbols = [...new Set(LITE_RECORDS.map((record) => record['symbol'] as string))]
/** Per symbol, its newest record in the fixture. */
const newest = (symbol: string): Readonly<Record<string, unknown>> =>
  LITE_RECORDS.filter((record) => record['symbol'] === symbol).sort((a, b) => (b['timestamp'] as number) - (a['timestamp'] as number))[0] as Readonly<Record<string, unknown>>

describe('records signed by liteEvmSignature only, through the library', () => {
  it('the fixture holds five records of distinct ids, none with an Arweave signature', () => {
    expect(new Set(LITE_RECORDS.map((record) => record['id'])).size).toBe(5)
    expect(symbols.length).toBeGreaterThan(1)
    for (const record of LITE_RECORDS) expect(Object.hasOwn(record, 'signature')).toBe(false)
  })

  it('are all valid under reject with RedStone\'s lite signer, and read back with exactly their fields', async () => {
    const store = await open(REJECT)
    expect(await store.putMany(LITE_RECORDS as never)).toBe(5)
    expect(store.signatures.verdicts).toMatchObject({ valid: 5, invalid: 0, malformed: 0, 'signer-not-allowed': 0, unsigned: 0 })
    expect(store.signatures.rejectedBatches).toBe(0)

    for (const record of LITE_RECORDS) {
      const symbol = record['symbol'] as string
      const timestamp = record['timestamp'] as number
      const [latest, ...more] = await store.latest(symbol, { to: timestamp })
      expect(more).toEqual([])
      expectSameFields(latest, asLatestReturns(record))
      // The range form adds `minutes`: RedStone's API computed the fixture's own.
      const [sampled] = await store.range(symbol, { from: timestamp, to: timestamp, interval: 60_000 })
      expectSameFields(sampled, { ...asLatestReturns(record), minutes: record['minutes'] })
      const answer = await store.query({ symbol, provider: 'redstone', toTimestamp: String(timestamp) })
      expectSameFields((answer as unknown[])[0], asLatestReturns(record))
    }

    const several = await store.several(symbols)
    expect(Object.keys(several).sort()).toEqual([...symbols].sort())
    for (const symbol of symbols) expectSameFields(several[symbol], asLatestReturns(newest(symbol)))

    const btc = newest('BTC')
    const batch = await store.batchAsOf({ symbols: ['BTC'], times: [btc['timestamp'] as number] })
    expectSameFields(batch['BTC']?.[String(btc['timestamp'])]?.record, asLatestReturns(btc))

    const exported: unknown[] = []
    for await (const record of store.export()) exported.push(record)
    expect(exported).toHaveLength(5)
    for (const record of exported) expectSameFields(record, asLatestReturns(byId((record as { id: string }).id)))

    // The JSON of an answer holds no signature either.
    expect(JSON.stringify(exported)).not.toMatch(/"signature"/)
  })

  it('read back the same once sealed into chunks (close seals; a reopened store reads them there)', async () => {
    const db = new MemoryLevel()
    const first = await PriceStore.open(db, { provider: LITE_PROVIDER, signatures: REJECT })
    await first.putMany(LITE_RECORDS as never)
    await first.close()
    const store = await PriceStore.open(db, { provider: LITE_PROVIDER, signatures: REJECT })
    stores.push(store)
    expect((await store.stats()).unsealedRecords).toBe(0)
    for (const record of LITE_RECORDS) {
      const { symbol, timestamp } = record as { symbol: string; timestamp: number }
      // The HTTP answer's text, written from the stored bytes.
      const answer = await answerPrices(store, new URLSearchParams({ symbol, provider: 'redstone', toTimestamp: String(timestamp) }))
      expect(answer.status).toBe(200)
      expect(answer.body).not.toContain('"signature"')
      expect(JSON.parse(answer.body)).toStrictEqual([asLatestReturns(record)])
      const ranged = await answerPrices(store, new URLSearchParams({ symbol, provider: 'redstone', fromTimestamp: String(timestamp), toTimestamp: String(timestamp), interval: '60000' }))
      expect(JSON.parse(ranged.body)).toStrictEqual([{ ...asLatestReturns(record), minutes: record['minutes'] }])
    }
    const report = await store.verify({ recheck: true })
    expect(report.recheck?.verdicts).toMatchObject({ valid: 5 })
  })

  it('come through a watch, live and replayed, with exactly their fields', async () => {
    const store = await open(REJECT)
    const live = store.watch()
    expect(await store.putMany(LITE_RECORDS as never)).toBe(5)
    const seen: unknown[] = []
    for await (const item of live) {
      if (item.type !== 'records') continue
      seen.push(...item.records)
      if (seen.length >= LITE_RECORDS.length) break
    }
    const replayed: unknown[] = []
    for await (const item of store.watch({ after: 0 })) {
      if (item.type === 'records') replayed.push(...item.records)
      if (item.position >= 1) break
    }
    for (const records of [seen, replayed]) {
      expect(records).toHaveLength(LITE_RECORDS.length)
      for (const record of records) expectSameFields(record, asLatestReturns(byId((record as { id: unknown }).id)))
    }
  })

  it('are valid when verified again as stored (verify with recheck)', async () => {
    const store = await open(REJECT)
    await store.putMany(LITE_RECORDS as never)
    const report = await store.verify({ recheck: true })
    expect(report.records).toBe(5)
    expect(report.stored).toMatchObject({ valid: 5, unchecked: 0 })
    expect(report.recheck?.verdicts).toMatchObject({ valid: 5, invalid: 0, malformed: 0, unsigned: 0 })
    expect(report.recheck?.altered).toEqual([])
  })

  it('a field selection of signature gives nothing for a record that has none', async () => {
    const store = await open()
    await store.putMany(LITE_RECORDS as never)
    const btc = newest('BTC')
    expect(await store.query({ symbol: 'BTC', fields: 'id,signature,value' })).toStrictEqual([{ id: btc['id'], value: btc['value'] }])
    const dropped = await store.query({ symbol: 'BTC', fields: '-source,-providerPublicKey' })
    const { source: _source, providerPublicKey: _key, ...rest } = asLatestReturns(btc)
    expectSameFields((dropped as unknown[])[0], rest)
  })

  it('a tampered copy is refused for its lite signature, and nothing of its batch is written', async () => {
    const store = await open(REJECT)
    const batch = [LITE_RECORDS[0], tampered(LITE_RECORDS[1] as Record<string, unknown>), LITE_RECORDS[2]]
    const err = await rejectsCode(store.putMany(batch as never), 'PRICE_INVALID_SIGNATURE')
    expect(err.details).toMatchObject({ index: 1, field: 'liteEvmSignature' })
    expect(err.message).toMatch(/^record 1: its liteEvmSignature is invalid/)
    expect(err.message).toContain(LITE_RECORDS[1]?.['id'] as string)
    for (const symbol of symbols) expect(await store.latest(symbol)).toEqual([])
    expect(store.signatures.rejectedBatches).toBe(1)
  })

  it('under flag, a tampered copy is kept with the verdict invalid', async () => {
    const store = await open({ ...REJECT, policy: 'flag' })
    await store.putMany([tampered(LITE_RECORDS[0] as Record<string, unknown>)] as never)
    const report = await store.verify()
    expect(report.stored).toMatchObject({ valid: 0, invalid: 1 })
    expect(report.failing[0]?.verdict.checks[0]).toMatchObject({ kind: 'lite-evm', result: 'invalid' })
  })

  for (const policy of ['off', 'flag', 'reject'] as const) {
    it(`a record with no signature of any kind is refused as PRICE_INVALID_RECORD (policy ${policy}), nothing written`, async () => {
      const store = await open({ ...REJECT, policy })
      const batch = [LITE_RECORDS[0], unsigned(LITE_RECORDS[1] as Record<string, unknown>)]
      const err = await rejectsCode(store.putMany(batch as never), 'PRICE_INVALID_RECORD')
      expect(err.details).toEqual({ index: 1, field: 'signature' })
      expect(err.message).toMatch(/^record 1: signature is missing, and the record carries no liteEvmSignature or evmSignature/)
      for (const symbol of symbols) expect(await store.latest(symbol)).toEqual([])
    })
  }

  it('an empty signature beside a lite signature is no signature: kept without one', async () => {
    const store = await open(REJECT)
    const btc = newest('BTC')
    await store.putMany([{ ...btc, signature: '' }] as never)
    const [latest] = await store.latest('BTC')
    expectSameFields(latest, asLatestReturns(btc))
  })

  it('a lite signature that is not 0x and 130 hex digits does not make a record signed', async () => {
    const store = await open()
    const btc = newest('BTC')
    const record = { ...unsigned(btc), liteEvmSignature: (btc['liteEvmSignature'] as string).slice(0, -2) }
    const err = await rejectsCode(store.putMany([record] as never), 'PRICE_INVALID_RECORD')
    expect(err.details).toEqual({ index: 0, field: 'signature' })
  })

  it('without an EVM signer configured, the lite signature is signer-not-allowed and reject refuses it', async () => {
    const store = await open({ policy: 'reject', threads: 1 })
    const err = await rejectsCode(store.putMany([LITE_RECORDS[0]] as never), 'PRICE_INVALID_SIGNATURE')
    expect(err.details).toMatchObject({ index: 0, field: 'liteEvmSignature' })
    expect(err.message).toContain('signer-not-allowed')
  })
})
