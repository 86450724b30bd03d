import { PriceStoreError, describeValue } from '../errors.js'
import { fail } from './query-errors.js'

/**
 * Whether `value` can serve as an `AbortSignal`. Checked by shape, not
 * `instanceof`, so a signal from another realm or a polyfill is accepted.
 */
function isAbortSignal(value: unknown): value is AbortSignal {
  if (typeof value !== 'object' || value === null) return false
  const signal = value as Partial<AbortSignal>
  return typeof signal.aborted === 'boolean' && typeof signal.addEventListener === 'function' && typeof signal.removeEventListener === 'function'
}

/**
 * The `signal` of a method's options, checked: JavaScript callers may pass
 * anything, and a value that is not a signal would otherwise be ignored
 * silently, leaving a query the caller believes cancellable.
 * @throws PriceStoreError `PRICE_INVALID_QUERY` (parameter `signal`)
 */
export function checkSignal(value: unknown): AbortSignal | undefined {
  if (value === undefined || isAbortSignal(value)) return value
  throw fail('PRICE_INVALID_QUERY', 'signal', `signal must be an AbortSignal (got ${describeValue(value)})`)
}

/** The coded error of an aborted query; the signal's reason is its `cause`. */
export function abortError(signal: AbortSignal): PriceStoreError {
  const reason: unknown = signal.reason
  const why = reason instanceof Error ? reason.message : reason === undefined ? '' : describeValue(reason)
  return new PriceStoreError('PRICE_ABORTED', `the query was aborted by its signal${why === '' ? '' : ` (${why})`}`, {
    cause: reason,
    details: { parameter: 'signal' },
  })
}

/** @throws PriceStoreError `PRICE_ABORTED` when `signal` is aborted */
export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted === true) throw abortError(signal)
}

/**
 * `batches`, checked against `signal` as each batch arrives: an abort stops
 * the read at the next batch, and leaving the loop closes the scan under it.
 */
export async function* abortableBatches<T>(batches: AsyncIterable<T>, signal: AbortSignal): AsyncGenerator<T> {
  for await (const batch of batches) {
    throwIfAborted(signal)
    yield batch
  }
}

/**
 * An iterator over `items` that ends it when `signal` aborts, even while
 * the consumer has stopped pulling: `items.return()` runs its `finally`
 * blocks, which release what it holds (a store's read view). Every pull
 * after the abort rejects with `PRICE_ABORTED`, so an aborted stream never
 * looks like a complete one.
 */
export function releaseOnAbort<T>(items: AsyncGenerator<T>, signal: AbortSignal): AsyncIterator<T> {
  // A failure while ending is the stream's own error, which the pull in progress (if any) reports.
  const release = (): void => void items.return(undefined).catch(() => {})
  let listening = false
  const stopListening = (): void => signal.removeEventListener('abort', release)
  return {
    async next() {
      if (signal.aborted) {
        stopListening()
        await items.return(undefined).catch(() => {})
        throw abortError(signal)
      }
      // Listen from the first pull: until then the generator has not started and holds nothing.
      if (!listening) {
        listening = true
        signal.addEventListener('abort', release, { once: true })
      }
      try {
        const step = await items.next()
        if (step.done === true) stopListening()
        return step
      } catch (err) {
        stopListening()
        throw err
      }
    },
    async return() {
      stopListening()
      return items.return(undefined)
    },
  }
}
