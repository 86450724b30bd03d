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
}
