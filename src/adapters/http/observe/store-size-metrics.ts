import type { Registry } from 'prom-client'

/**
 * The store's size is read at most once in this many milliseconds: scrapes
 * closer together are answered from the last reading. `store.stats()` counts
 * every symbol's index entries and walks the database's directory (a few ms
 * on a 1.3 M-record store), which a scraper polling every second should not
 * pay each time; the numbers move slowly anyway.
 */
export const STORE_SIZE_MAX_AGE_MS = 10_000

/** What the size metrics read of a store: `PriceStore.stats` (only these members). */
interface SizeSource {
  stats(): Promise<{ readonly records: number; readonly symbols: number; readonly disk: { readonly bytes: number } | null }>
}

/** Whether `store` can tell its size. */
function hasStats(store: object): store is SizeSource {
  return typeof (store as { stats?: unknown }).stats === 'function'
}

/** One reading of the store's size. */
interface SizeReading {
  readonly records: number
  readonly symbols: number
  /** `undefined` when the store cannot say (not on disk, nor approximated). */
  readonly diskBytes: number | undefined
}

/**
 * The store's size, from `store.stats()`: `price_store_records` (records
 * stored), `price_store_symbols` (symbols with a record) and
 * `price_store_disk_bytes` (bytes the database takes, when the store can say).
 * Read at scrape time, at most once per {@link STORE_SIZE_MAX_AGE_MS} (`clock`
 * in ms), and once for the three gauges of one scrape. A store that cannot be
 * read now (closing) shows none of them rather than failing the scrape.
 */
export function registerStoreSizeMetrics(registry: Registry, store: object, clock: () => number = Date.now): void {
  if (!hasStats(store)) return
  let reading: SizeReading | undefined
  let readAt = Number.NEGATIVE_INFINITY
  let pending: Promise<void> | undefined
  const refresh = (): Promise<void> => {
    if (pending !== undefined) return pending
    if (clock() - readAt < STORE_SIZE_MAX_AGE_MS) return Promise.resolve()
    pending = readSize(store).then(
      (value) => {
        reading = value
        readAt = clock()
      },
      () => {
        // Not cached: the next scrape tries again.
        reading = undefined
      },
    ).finally(() => (pending = undefined))
    return pending
  }
  // Plain collectors rather than prom-client Gauges: a gauge without labels always shows a value
  // (0 after a reset), and a size the store cannot tell must show no sample rather than 0.
  const gauge = (name: string, help: string, value: (reading: SizeReading) => number | undefined): void => {
    const metric = {
      name,
      help,
      type: 'gauge',
      aggregator: 'sum',
      get: async () => {
        await refresh()
        const current = reading === undefined ? undefined : value(reading)
        return { ...metric, values: current === undefined ? [] : [{ labels: {}, value: current }] }
      },
    }
    registry.registerMetric(metric as never)
  }
  gauge('price_store_records', `Records stored, all symbols together (read at most every ${STORE_SIZE_MAX_AGE_MS / 1000} s).`, (size) => size.records)
  gauge('price_store_symbols', `Symbols with at least one record (read at most every ${STORE_SIZE_MAX_AGE_MS / 1000} s).`, (size) => size.symbols)
  gauge('price_store_disk_bytes', `Bytes the database takes on disk (read at most every ${STORE_SIZE_MAX_AGE_MS / 1000} s).`, (size) => size.diskBytes)
}

async function readSize(store: SizeSource): Promise<SizeReading> {
  const stats = await store.stats()
  return { records: stats.records, symbols: stats.symbols, diskBytes: stats.disk?.bytes }
}
