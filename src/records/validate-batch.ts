import { PriceStoreError, describeValue } from '../errors.js'
import type { Provider } from '../types.js'
import type { StoredRecord } from './stored-record.js'
import { validateRecord } from './validate-record.js'

/**
 * Checks a batch given to `putMany` and each record in it, before anything
 * is written. The batch must be a synchronous iterable object (an array, a
 * Set, a generator); a string is iterable too but never a batch of records.
 * An error thrown by the iterable itself (its iterator, or a getter on a
 * record) is the caller's own and passes through unchanged; nothing of the
 * batch is written either way.
 * @throws PriceStoreError `PRICE_INVALID_RECORD`: with `details.parameter`
 *   `records` when the batch is not iterable, else with `details.index` and `details.field`
 */
export function validateBatch(records: unknown, provider: Provider): StoredRecord[] {
  if (!isIterableObject(records)) {
    const hint = isAsyncIterable(records) ? ' (an async iterable is not accepted: collect it into arrays and write each)' : ''
    throw new PriceStoreError('PRICE_INVALID_RECORD', `records must be an iterable of records, such as an array${hint} (got ${describeValue(records)})`, {
      details: { parameter: 'records' },
    })
  }
  const stored: StoredRecord[] = []
  let index = 0
  for (const record of records) stored.push(validateRecord(record, index++, provider))
  return stored
}

function isIterableObject(value: unknown): value is Iterable<unknown> {
  return typeof value === 'object' && value !== null && typeof (value as Partial<Iterable<unknown>>)[Symbol.iterator] === 'function'
}

function isAsyncIterable(value: unknown): boolean {
  return typeof value === 'object' && value !== null && typeof (value as Partial<AsyncIterable<unknown>>)[Symbol.asyncIterator] === 'function'
}
