import type { Registry } from 'prom-client'

/** The overall verdicts, in the order metrics list them. */
export const VERDICTS = ['valid', 'invalid', 'malformed', 'signer-not-allowed', 'unsigned'] as const

/** What the signature metrics read of a store (`PriceStore.signatures`), at scrape time, with no I/O. */
interface SignatureCounts {
  readonly policy: string
  readonly verdicts: Readonly<Record<string, number>>
  readonly rejectedBatches: number
}

/**
 * Registers the signature metrics of a store that verifies signatures at ingest (`signatures.policy` `flag` or
 * `reject`; nothing for a store that does not, or has no such member):
 *
 * - `price_store_signature_verdicts_total{verdict}`: records verified since the store opened, by overall verdict
 *   (every verdict has a sample, so a rate of `invalid` is 0 rather than absent);
 * - `price_store_signature_rejected_batches_total`: batches refused for a signature (`reject`).
 */
export function registerSignatureMetrics(registry: Registry, store: object): void {
  const read = (): SignatureCounts | undefined => {
    const counts = (store as { readonly signatures?: unknown }).signatures
    return typeof counts === 'object' && counts !== null && (counts as SignatureCounts).policy !== 'off' ? counts as SignatureCounts : undefined
  }
  if (read() === undefined) return
  const metric = (name: string, help: string, values: () => { labels: Record<string, string>; value: number }[]): void => {
    const built = { name, help, type: 'counter', aggregator: 'sum', get: () => ({ ...built, values: values() }) }
    registry.registerMetric(built as never)
  }
  metric('price_store_signature_verdicts_total', 'Records whose signatures were verified as written since the store opened, by overall verdict.', () => {
    const counts = read()
    return VERDICTS.map((verdict) => ({ labels: { verdict }, value: counts?.verdicts[verdict] ?? 0 }))
  })
  metric('price_store_signature_rejected_batches_total', 'Batches refused since the store opened because a record\'s signature was not valid.', () =>
    [{ labels: {}, value: read()?.rejectedBatches ?? 0 }])
}
