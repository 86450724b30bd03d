/**
 * Writes the load test's larger data set (issue 12: 50 symbols, one record
 * every 10 s, 3 days, about 1.3 M records) into a store: the demo
 * generator's realistic records (`generateDemoRecords`) for the 20 demo
 * tokens plus as many more as asked, with the provider `price-store serve`
 * uses by default (`resolveStoreConfig`), written with `putMany` in batches
 * of 10,000. Bundled from src/ by load-test.mjs with esbuild and run as a
 * child process:
 *
 *   node write-data.mjs DB SYMBOLS DAYS
 *
 * Prints one line to stdout when done: {"count":N,"seconds":S}.
 */
import { PriceStore } from '../../src/index.js'
import { DEMO_TOKENS, generateDemoRecords, type DemoRecord, type DemoToken } from '../../src/demo/demo-data.js'
import { chooseProvider, resolveStoreConfig } from '../../src/cli/config.js'

/** Tokens beyond the demo's 20: prices and volatilities of the same era, 3 to 5 exchanges each. */
const MORE_TOKENS: readonly DemoToken[] = [
  ['AAVE', 93.4, 0.05], ['MKR', 2_480, 0.045], ['CRV', 0.41, 0.06], ['SNX', 2.36, 0.055], ['COMP', 52.7, 0.05],
  ['LDO', 2.01, 0.055], ['ARB', 1.07, 0.055], ['OP', 2.42, 0.055], ['NEAR', 7.02, 0.055], ['FTM', 0.72, 0.06],
  ['APT', 8.63, 0.055], ['SUI', 1.02, 0.06], ['INJ', 26.8, 0.06], ['TIA', 9.93, 0.065], ['SEI', 0.49, 0.065],
  ['RNDR', 10.3, 0.06], ['FIL', 5.9, 0.05], ['ICP', 11.6, 0.05], ['ETC', 29.4, 0.045], ['BCH', 476, 0.04],
  ['XLM', 0.105, 0.04], ['TRX', 0.117, 0.03], ['HBAR', 0.108, 0.05], ['VET', 0.037, 0.05], ['ALGO', 0.176, 0.05],
  ['GRT', 0.29, 0.055], ['SAND', 0.42, 0.055], ['MANA', 0.45, 0.055], ['AXS', 7.4, 0.055], ['1INCH', 0.43, 0.055],
].map(([symbol, price, dailyVolatility], i) => ({
  symbol: symbol as string,
  price: price as number,
  dailyVolatility: dailyVolatility as number,
  exchanges: ['binance', 'coinbasepro', 'kraken', 'okex', 'kucoin'].slice(0, 3 + (i % 3)),
}))

const [db, symbolsText = '50', daysText = '3'] = process.argv.slice(2)
if (db === undefined) throw new Error('usage: write-data DB SYMBOLS DAYS')
const symbolCount = Number(symbolsText)
const days = Number(daysText)
const all = [...DEMO_TOKENS, ...MORE_TOKENS]
if (!Number.isSafeInteger(symbolCount) || symbolCount < 1 || symbolCount > all.length) throw new Error(`SYMBOLS must be 1..${all.length}`)

const config = await resolveStoreConfig({ db })
// The provider `serve` would choose for a new database: the flags' fields, else RedStone's.
const store = await PriceStore.open(config.location, { provider: chooseProvider(config.provider, undefined) })
const started = performance.now()
let count = 0
try {
  let batch: DemoRecord[] = []
  const records = generateDemoRecords({ providerId: store.provider.id, durationMs: Math.round(days * 86_400_000), tokens: all.slice(0, symbolCount), seed: 'price-store-load', signed: false })
  for (const record of records) {
    batch.push(record)
    if (batch.length >= 10_000) {
      count += await store.putMany(batch)
      batch = []
      if (count % 200_000 === 0) process.stderr.write(`  ${count.toLocaleString('en-US')} records\n`)
    }
  }
  if (batch.length > 0) count += await store.putMany(batch)
} finally {
  await store.close()
}
process.stdout.write(`${JSON.stringify({ count, seconds: +((performance.now() - started) / 1000).toFixed(1) })}\n`)
