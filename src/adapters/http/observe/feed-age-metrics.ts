import { Gauge, type Registry } from 'prom-client'

/**
 * At most this many symbols get a `price_store_feed_age_seconds` series of their own (the first in the store's
 * order, so the label set stays put between scrapes); the rest are counted in
 * `price_store_feed_age_unlabelled_symbols` and still weigh in `price_store_feed_age_max_seconds`. Every series
 * is a label value Prometheus keeps for good: a store of thousands of symbols must not make thousands.
 */
export const FEED_AGE_MAX_SYMBOLS = 100

/** What the feed-age metrics read of a store: `PriceStore.symbols` and `PriceStore.several`. */
interface LatestSource {
  symbols(): Promise<readonly string[]>
  several(symbols?: readonly string[]): Promise<Readonly<Record<string, { readonly timestamp: number }>>>
}

/** Whether `store` can tell each symbol's newest record. */
function hasLatest(store: object): store is LatestSource {
  const members = store as { symbols?: unknown; several?: unknown }
  return typeof members.symbols === 'function' && typeof members.several === 'function'
}

/**
 * Each feed's staleness, read at scrape time from the newest record of each symbol (`store.several()`, which the
 * store answers from its in-memory tails once loaded): `price_store_feed_age_seconds{symbol}` (now − the newest
 * record's timestamp, for the first {@link FEED_AGE_MAX_SYMBOLS} symbols), `price_store_feed_age_max_seconds`
 * (the stalest of every symbol) and `price_store_feed_age_unlabelled_symbols`. A store that cannot be read now
 * (closing) shows none of them rather than failing the scrape. `clock` is the time ages are measured from.
 */
export function registerFeedAgeMetrics(registry: Registry, store: object, clock: () => number = Date.now): void {
  if (!hasLatest(store)) return
  let ages: { symbol: string; age: number }[] = []
  let read: Promise<void> | undefined
  // The three gauges are collected one after another in one scrape: one read serves them all.
  const refresh = (): Promise<void> => {
    read ??= readAges(store, clock).then(
      (value) => {
        ages = value
      },
      () => {
        ages = []
      },
    ).finally(() => {
      setImmediate(() => (read = undefined))
    })
    return read
  }
  const registers = [registry]
  new Gauge({
    name: 'price_store_feed_age_seconds',
    help: `Seconds since the newest record of each symbol (the first ${FEED_AGE_MAX_SYMBOLS} symbols in the store's order).`,
    labelNames: ['symbol'],
    registers,
    async collect() {
      await refresh()
      this.reset()
      for (const { symbol, age } of ages.slice(0, FEED_AGE_MAX_SYMBOLS)) this.set({ symbol }, age)
    },
  })
  new Gauge({
    name: 'price_store_feed_age_max_seconds',
    help: 'Seconds since the newest record of the stalest symbol, every symbol counted.',
    registers,
    async collect() {
      await refresh()
      this.reset()
      if (ages.length > 0) this.set(Math.max(...ages.map(({ age }) => age)))
    },
  })
  new Gauge({
    name: 'price_store_feed_age_unlabelled_symbols',
    help: `Symbols past the first ${FEED_AGE_MAX_SYMBOLS}, which have no price_store_feed_age_seconds series of their own.`,
    registers,
    async collect() {
      await refresh()
      this.set(Math.max(0, ages.length - FEED_AGE_MAX_SYMBOLS))
    },
  })
}

/** Each symbol's age in seconds, in the store's order. */
async function readAges(store: LatestSource, clock: () => number): Promise<{ symbol: string; age: number }[]> {
  const [symbols, latest] = await Promise.all([store.symbols(), store.several()])
  const now = clock()
  const ages: { symbol: string; age: number }[] = []
  for (const symbol of symbols) {
    const record = latest[symbol]
    if (record !== undefined) ages.push({ symbol, age: (now - record.timestamp) / 1000 })
  }
  return ages
}
