/**
 * An answer or its coded error, in one comparable value: property tests
 * compare what the engine, the store and the model give, failures included.
 */

/** `{ answer }`, or `{ error: code }` (with the count and cap of `PRICE_RANGE_TOO_LARGE`); an uncoded error is thrown on. */
export async function outcome(run: () => Promise<unknown>): Promise<unknown> {
  try {
    return { answer: await run() }
  } catch (err) {
    const { code, details } = err as { code?: string; details?: { count?: number; cap?: number } }
    if (code === undefined) throw err
    return code === 'PRICE_RANGE_TOO_LARGE' ? { error: code, details: { count: details?.count, cap: details?.cap } } : { error: code }
  }
}
