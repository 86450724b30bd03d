import { describe, expect, it } from 'vitest'
import { answerJsonPieces, answerToJson } from '../../src/engine/answer-json.js'
import { executePlanDeferred } from '../../src/engine/execute.js'
import { DeferredAnswer } from '../../src/engine/deferred-answer.js'
import { fieldSelector } from '../../src/engine/field-selection.js'
import { planQuery } from '../../src/engine/plan.js'
import { isPriceStoreError, type PriceRecord, type QueryParams } from '../../src/index.js'
import { executeQuery, parseQuery } from '../../src/engine.js'
import { parseFieldSelection, RECORD_FIELDS } from '../../src/rules/fields.js'
import { TEST_LIMITS } from '../../src/testing/record-arbitraries.js'
import { T0, TEST_PROVIDER, makeRecord } from '../../src/testing/records.js'
import { SELECTABLE_FIELDS, storedRecords } from '../../src/testing/reference-model.js'
import { ArraySource } from '../support/array-source.js'

const config = { provider: TEST_PROVIDER, limits: TEST_LIMITS }
const MINUTE = 60_000

// Two symbols, a record a minute for ten minutes; one BTC record carries extras, one named __proto__.
const stored = storedRecords(
  [
    ...Array.from({ length: 10 }, (_, i) => makeRecord({ symbol: 'BTC', timestamp: T0 + i * MINUTE })),
    ...Array.from({ length: 10 }, (_, i) => makeRecord({ symbol: 'ETH', timestamp: T0 + i * MINUTE })),
    JSON.parse(JSON.stringify({ ...makeRecord({ symbol: 'BTC', timestamp: T0 + 30 * MINUTE }), note: 'extra' }).replace('"note"', '"note":"n","__proto__"')),
  ],
  TEST_PROVIDER,
)

async function answer(search: string): Promise<unknown> {
  return executeQuery(parseQuery(new URLSearchParams(search), config), new ArraySource(stored), TEST_LIMITS)
}

function codeAndParameter(params: QueryParams): { code: string; parameter: unknown; message: string } {
  try {
    parseQuery(params, config)
  } catch (err) {
    if (!isPriceStoreError(err)) throw err
    return { code: err.code, parameter: err.details.parameter, message: err.message }
  }
  throw new Error('expected a coded error')
}

/** `record` without the keys named, the rest in its order. */
function without(record: object, ...names: string[]): object {
  return Object.fromEntries(Object.entries(record).filter(([key]) => !names.includes(key)))
}

describe('parseFieldSelection', () => {
  it('reads a keep list and a drop list; a name given twice counts once', () => {
    expect(parseFieldSelection('fields', 'symbol,value,timestamp')).toEqual({ mode: 'keep', names: ['symbol', 'value', 'timestamp'] })
    expect(parseFieldSelection('fields', '-signature,-providerPublicKey')).toEqual({ mode: 'drop', names: ['signature', 'providerPublicKey'] })
    expect(parseFieldSelection('fields', 'value,value,id')).toEqual({ mode: 'keep', names: ['value', 'id'] })
    expect(Object.isFrozen(parseFieldSelection('fields', 'value'))).toBe(true)
  })

  it('takes every record field name and minutes: the names the reference model takes', () => {
    expect(parseFieldSelection('fields', RECORD_FIELDS.join(',')).names).toEqual([...RECORD_FIELDS])
    expect([...RECORD_FIELDS]).toEqual([...SELECTABLE_FIELDS])
  })

  it.each([
    ['', 'must name at least one record field'],
    ['value,', 'an empty entry'],
    [',value', 'an empty entry'],
    ['-', 'an empty entry'],
    ['value,,id', 'an empty entry'],
    ['foo', 'unknown record field "foo"'],
    ['Value', 'unknown record field "Value"'],
    ['-foo', 'unknown record field "foo"'],
    ['--signature', 'unknown record field "-signature"'],
    [' value', 'unknown record field " value"'],
    ['bucket', 'unknown record field "bucket"'],
    ['value,-signature', 'not both'],
    ['-signature,value', 'not both'],
  ])('refuses fields=%j with PRICE_INVALID_QUERY naming fields and the value', (value, problem) => {
    const { code, parameter, message } = codeAndParameter({ symbol: 'BTC', fields: value })
    expect(code).toBe('PRICE_INVALID_QUERY')
    expect(parameter).toBe('fields')
    expect(message).toContain(problem)
    if (value !== '') expect(message).toContain(JSON.stringify(value))
  })

  it('refuses fields given twice, even with the same value, and a non-string from a plain object', () => {
    expect(codeAndParameter(new URLSearchParams('symbol=BTC&fields=value&fields=value'))).toMatchObject({ code: 'PRICE_INVALID_QUERY', parameter: 'fields' })
    expect(codeAndParameter({ symbol: 'BTC', fields: ['value', 'id'] })).toMatchObject({ code: 'PRICE_INVALID_QUERY', parameter: 'fields' })
    expect(codeAndParameter({ symbol: 'BTC', fields: 5 as never })).toMatchObject({ code: 'PRICE_INVALID_QUERY', parameter: 'fields' })
  })

  it('the parameter is checked whatever the form, and after the other parameters’ own rules', () => {
    expect(codeAndParameter({ fields: 'nope' })).toMatchObject({ parameter: 'fields' })
    expect(codeAndParameter({ symbol: 'BTC', limit: 'x', fields: 'nope' })).toMatchObject({ parameter: 'limit' })
    // Its own rule comes before the rules between parameters.
    expect(codeAndParameter({ symbol: 'BTC', interval: '60000', fields: 'nope' })).toMatchObject({ parameter: 'fields' })
  })

  it('a query without fields has no fields key: the same query as before the parameter existed', () => {
    expect(parseQuery({ symbol: 'BTC' }, config)).toEqual({ kind: 'latest', symbol: 'BTC', limit: 1, offset: 0 })
    expect('fields' in parseQuery({ symbol: 'BTC' }, config)).toBe(false)
    expect(parseQuery({ symbol: 'BTC', fields: '-signature' }, config)).toEqual({ kind: 'latest', symbol: 'BTC', limit: 1, offset: 0, fields: { mode: 'drop', names: ['signature'] } })
  })
})

describe('fields on every form', () => {
  const latestBtc = stored.filter((r) => r.symbol === 'BTC').sort((a, b) => b.timestamp - a.timestamp)[0] as PriceRecord

  it('latest and latest-N: a keep list keeps only its fields in the record’s order, whatever the list’s order', async () => {
    expect(await answer('symbol=BTC&fields=timestamp,value,symbol')).toEqual([{ symbol: 'BTC', value: latestBtc.value, timestamp: latestBtc.timestamp }])
    const [record] = (await answer('symbol=BTC&fields=timestamp,value,symbol')) as object[]
    expect(Object.keys(record as object)).toEqual(['symbol', 'value', 'timestamp'])
    const three = (await answer('symbol=ETH&limit=3&fields=id')) as object[]
    expect(three.map((r) => Object.keys(r))).toEqual([['id'], ['id'], ['id']])
  })

  it('a drop list keeps the rest, extras included (one named __proto__ stays a key); a keep list leaves extras out', async () => {
    const [dropped] = (await answer('symbol=BTC&fields=-signature,-providerPublicKey')) as object[]
    expect(answerToJson([dropped] as never)).toBe(answerToJson([without(latestBtc, 'signature', 'providerPublicKey')] as never))
    expect(Object.keys(dropped as object)).toContain('__proto__')
    expect(Object.getPrototypeOf(dropped)).toBe(Object.prototype)
    const [kept] = (await answer('symbol=BTC&fields=id,symbol,provider,value,signature,permawebTx,version,source,timestamp,providerPublicKey')) as object[]
    expect(Object.keys(kept as object)).not.toContain('note')
    expect(Object.keys(kept as object)).not.toContain('__proto__')
  })

  it('history, as-of and several: the same selection on each record', async () => {
    const history = (await answer(`symbol=BTC&fromTimestamp=${T0}&toTimestamp=${T0 + 2 * MINUTE}&limit=5&fields=timestamp`)) as object[]
    expect(history).toEqual([{ timestamp: T0 + 2 * MINUTE }, { timestamp: T0 + MINUTE }, { timestamp: T0 }])
    expect(await answer(`symbol=BTC&toTimestamp=${T0 + 90_000}&direction=after&fields=timestamp`)).toEqual([{ timestamp: T0 + 2 * MINUTE }])
    expect(await answer(`symbols=ETH,BTC&toTimestamp=${T0 + MINUTE}&fields=symbol,timestamp`)).toEqual({ ETH: { symbol: 'ETH', timestamp: T0 + MINUTE }, BTC: { symbol: 'BTC', timestamp: T0 + MINUTE } })
  })

  it('range: minutes can be kept or left out like any field', async () => {
    const search = `symbol=ETH&fromTimestamp=${T0}&toTimestamp=${T0 + 4 * MINUTE}&interval=${2 * MINUTE}`
    expect(await answer(`${search}&fields=timestamp,minutes`)).toEqual([{ timestamp: T0 + MINUTE, minutes: 1 }, { timestamp: T0 + 3 * MINUTE, minutes: 3 }, { timestamp: T0 + 4 * MINUTE, minutes: 4 }])
    const whole = (await answer(search)) as object[]
    expect(await answer(`${search}&fields=-minutes,-source`)).toEqual(whole.map((r) => without(r, 'minutes', 'source')))
  })

  it('fill: each point keeps bucket, carried and age, its record is selected', async () => {
    const points = (await answer(`symbol=ETH&fromTimestamp=${T0 + 9 * MINUTE}&toTimestamp=${T0 + 11 * MINUTE}&interval=${MINUTE}&fill=prev&fields=value`)) as object[]
    expect(points.map((p) => Object.keys(p))).toEqual([['bucket', 'carried', 'age', 'record'], ['bucket', 'carried', 'age', 'record'], ['bucket', 'carried', 'age', 'record']])
    expect(points.map((p) => Object.keys((p as { record: object }).record))).toEqual([['value'], ['value'], ['value']])
  })

  it('candles and TWAP: their record references are selected, the rest stays', async () => {
    const candles = (await answer(`symbol=ETH&fromTimestamp=${T0}&toTimestamp=${T0 + 9 * MINUTE}&interval=${5 * MINUTE}&aggregate=candles&fields=value,timestamp`)) as Record<string, unknown>[]
    const whole = (await answer(`symbol=ETH&fromTimestamp=${T0}&toTimestamp=${T0 + 9 * MINUTE}&interval=${5 * MINUTE}&aggregate=candles`)) as Record<string, object>[]
    expect(candles).toEqual(whole.map((c) => ({ ...c, open: without(c['open']!, 'id'), high: without(c['high']!, 'id'), low: without(c['low']!, 'id'), close: without(c['close']!, 'id') })))
    const twap = (await answer(`aggregate=twap&symbols=ETH&fromTimestamp=${T0}&toTimestamp=${T0 + 9 * MINUTE}&fields=-value,-timestamp`)) as Record<string, Record<string, unknown>>
    expect(Object.keys(twap['ETH']!)).toEqual(['twap', 'from', 'to', 'start', 'count', 'first', 'last'])
    expect(twap['ETH']!['first']).toEqual({ id: expect.any(String) })
  })
})

describe('deferred answers with fields', () => {
  it('are selected as they are read, and serialise as the selected records, never from the rows’ own JSON', async () => {
    const plan = planQuery(parseQuery({ symbol: 'BTC', limit: '3', fields: 'id,value' }, config), TEST_LIMITS.maxRangePoints)
    const deferred = await executePlanDeferred(plan, new ArraySource(stored))
    expect(deferred).toBeInstanceOf(DeferredAnswer)
    const answer = deferred as DeferredAnswer
    expect(answer.json(0)).toBeUndefined()
    expect(Object.keys(answer.item(0))).toEqual(['id', 'value'])
    expect([...answerJsonPieces(answer, 10)].join('')).toBe(answerToJson(answer.toArray() as never))
  })

  it('fieldSelector does not change the record it selects from', () => {
    const record = Object.freeze({ ...stored[0]! })
    const select = fieldSelector({ mode: 'drop', names: ['signature'] })
    expect(Object.keys(select(record))).not.toContain('signature')
    expect(record.signature).toBe(stored[0]!.signature)
  })
})
