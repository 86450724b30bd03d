import { abortableBatches, throwIfAborted } from '../rules/abort.js'
import type { SampleRange, ScanOptions, ScanRow, ScanSource } from './scan-source.js'

/**
 * `source` with every batched read checked against `signal` (see
 * {@link abortableBatches}); reads answered at once are passed through
 * untouched, since nothing can abort while they run.
 */
export function abortableSource(source: ScanSource, signal: AbortSignal): ScanSource {
  const { scanNow, bucketHeads } = source
  return {
    scan: (symbol, options) => abortableBatches(source.scan(symbol, options), signal),
    symbols: async () => {
      const symbols = await source.symbols()
      throwIfAborted(signal)
      return symbols
    },
    ...(scanNow === undefined ? {} : { scanNow: (symbol: string, options: ScanOptions) => scanNow.call(source, symbol, options) }),
    ...(bucketHeads === undefined ? {} : {
      bucketHeads: (symbol: string, range: SampleRange) => {
        const heads = bucketHeads.call(source, symbol, range)
        return heads === undefined || Array.isArray(heads) ? heads : abortableBatches(heads as AsyncIterable<readonly ScanRow[]>, signal)
      },
    }),
  }
}
