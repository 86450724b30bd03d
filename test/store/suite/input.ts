/**
 * What put() and putMany() accept, on the suite's backend: typed as
 * `NewPriceRecord` for TypeScript callers (the `@ts-expect-error` lines are
 * checked by `npm run typecheck`), and checked at run time for JavaScript
 * callers, where every bad argument is a coded error and nothing of a
 * refused batch is written; an iterable that throws part-way writes nothing.
 */
import { describe, expect, it } from 'vitest'
import type { NewPriceRecord } from '../../../src/index.js'
import { T0, TEST_PROVIDER, makeRecord } from '../../../src/testing/records.js'
import { rejectsCode } from '../../support/assertions.js'
import { type FeatureTests, useStores } from './context.js'

/** A call the type checker refuses, made anyway as a JavaScript caller would. */
const untyped = (value: unknown): never => value as never

export const inputTests: FeatureTests = (suite) => {
  describe('input', () => {
    const { openStore } = useStores(suite)

    describe('putMany with something that is not a batch of records', () => {
      async function* asyncRecords(): AsyncGenerator<NewPriceRecord> {
        yield makeRecord()
      }

      it.each([
        ['null', null],
        ['undefined', undefined],
        ['a number', 5],
        ['a string', 'abc'],
        ['a plain object', { symbol: 'BTC' }],
        ['an async iterable', asyncRecords()],
      ])('%s: PRICE_INVALID_RECORD naming the records argument, nothing written', async (_name, records) => {
        const store = await openStore()
        const err = await rejectsCode(store.putMany(untyped(records)), 'PRICE_INVALID_RECORD')
        expect(err.details).toEqual({ parameter: 'records' })
        expect(err.message).toMatch(/^records must be an iterable of records/)
        expect(await store.symbols()).toEqual([])
      })

      it('an async iterable is told how to write it', async () => {
        const store = await openStore()
        const err = await rejectsCode(store.putMany(untyped(asyncRecords())), 'PRICE_INVALID_RECORD')
        expect(err.message).toMatch(/async iterable is not accepted/)
      })
    })

    describe('put with something that is not a record', () => {
      it.each([['undefined', undefined], ['null', null], ['a number', 5], ['an array', [makeRecord()]]])(
        '%s: PRICE_INVALID_RECORD at index 0',
        async (_name, record) => {
          const store = await openStore()
          const err = await rejectsCode(store.put(untyped(record)), 'PRICE_INVALID_RECORD')
          expect(err.details).toEqual({ index: 0 })
          expect(await store.symbols()).toEqual([])
        },
      )
    })

    it('putMany passes the error of an iterable that throws part-way through unchanged and writes nothing', async () => {
      const store = await openStore()
      const failure = new Error('the input file could not be read')
      function* records(): Generator<NewPriceRecord> {
        yield makeRecord({ timestamp: T0 })
        yield makeRecord({ timestamp: T0 + 1 })
        throw failure
      }
      await expect(store.putMany(records())).rejects.toBe(failure)
      expect(await store.latest('BTC')).toEqual([])
    })

    describe('the record type, for the type checker', () => {
      it('accepts a documented record (providerPublicKey optional, extra fields kept)', async () => {
        const store = await openStore()
        const record: NewPriceRecord = {
          id: 'r1', symbol: 'BTC', provider: TEST_PROVIDER.id, value: 1, signature: 's', permawebTx: 't', version: '0.4', source: {}, timestamp: T0,
          liteEvmSignature: '0xabc',
        }
        expect(await store.putMany([record])).toBe(1)
        await store.put({ ...record, id: 'r2', providerPublicKey: TEST_PROVIDER.publicKey })
        expect(await store.latest('BTC', { limit: 2 })).toHaveLength(2)
      })

      it('refuses at compile time what the run-time check refuses', async () => {
        const store = await openStore()
        // @ts-expect-error: a string value, and the signed fields missing
        await rejectsCode(store.putMany([{ symbol: 'BTC', value: '1' }]), 'PRICE_INVALID_RECORD')
        // @ts-expect-error: value must be a number
        await rejectsCode(store.put({ ...makeRecord(), value: '1' }), 'PRICE_INVALID_RECORD')
        // @ts-expect-error: not a batch
        await rejectsCode(store.putMany(null), 'PRICE_INVALID_RECORD')
        // @ts-expect-error: not a record
        await rejectsCode(store.put(undefined), 'PRICE_INVALID_RECORD')
        // @ts-expect-error: records read from elsewhere must be checked or asserted by the caller
        await rejectsCode(store.putMany([JSON.parse('{}') as unknown]), 'PRICE_INVALID_RECORD')
      })
    })
  })
}
