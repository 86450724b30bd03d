import { PriceStoreError } from '../../errors.js'

/**
 * The well-known symbol `await using` calls, present from Node 20.4. On an
 * older runtime (no polyfill loaded first) the method is keyed by a private
 * symbol instead of the property name "undefined", and `close()` remains.
 */
export const asyncDispose: typeof Symbol.asyncDispose = Symbol.asyncDispose ?? (Symbol('Symbol.asyncDispose') as typeof Symbol.asyncDispose)

/** Where a store is in its life. Queries and writes need `'open'`. */
export type StoreStatus = 'opening' | 'open' | 'closing' | 'closed'

/** A store's status, which every room asks before it works. */
export class StoreLife {
  #status: StoreStatus = 'closed'

  get status(): StoreStatus {
    return this.#status
  }

  /** Moves the store to `status` (only the open and close sequences do). */
  become(status: StoreStatus): void {
    this.#status = status
  }

  /** @throws PriceStoreError `PRICE_NOT_OPEN` unless the store is open */
  assertOpen(): void {
    if (this.#status !== 'open') throw new PriceStoreError('PRICE_NOT_OPEN', `the store is ${this.#status}, not open`)
  }
}
