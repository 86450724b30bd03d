import type { ReadScope } from './read-scope.js'

/**
 * What every query method takes besides its form's own options. Its own
 * file so that the forms (forms/query-form.ts) name it without importing
 * the typed options, which import the parser, which reads the forms.
 */
export interface QueryOptions {
  /**
   * Cancels the query: once it aborts, the query rejects with
   * `PRICE_ABORTED` (the signal's reason as `cause`) and stops reading at
   * its next batch; a stream's next pull rejects and its view is released.
   */
  readonly signal?: AbortSignal
  /**
   * What this read may see (the plan-based methods: `query`, `ask`, `run`,
   * `runDeferred`, `page`, and `batchAsOf`): only records at or before
   * `notAfter`, of the `symbols` listed. Every form answers as if the store
   * held nothing else; a metering service gives each reader its own.
   */
  readonly scope?: ReadScope
}
