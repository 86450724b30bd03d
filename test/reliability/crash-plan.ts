/**
 * The deterministic write history of the crash test, shared by the child
 * writer (which writes it) and the test (which knows what each batch held).
 *
 * Batch `n` (1-based) depends only on `n` and the layout. In the `minutes`
 * layout its new records fall in its own ten minutes, so an hour fills over
 * six batches; in the `hours` layout they spread over three hours from hour
 * `n`, so every batch writes into several hours (one log entry each) and
 * moves time on by an hour, and sealing runs after every batch. Its size varies from 1 to 1500
 * records over several symbols; most records are new, some overwrite a key
 * of an earlier batch (or of the same batch) with new contents, some are
 * backfills into the past, some tie on timestamp with ids whose UTF-8 and
 * UTF-16 orders disagree. Every record a batch writes carries the batch
 * number in its value, signature and an extra field, so the state after
 * batch k differs from the state after batch k-1 in every key batch k wrote:
 * a partly applied batch cannot pass for a whole one.
 */

import type { InputRecord } from '../../src/testing/records.js'

export const CRASH_PROVIDER = Object.freeze({
  name: 'redstone',
  id: 'crash-provider-id',
  publicKey: 'crash-provider-public-key',
})

/** Valid symbols that trip naive code: a prefix of another, a prototype name, non-ASCII. */
export const CRASH_SYMBOLS: readonly string[] = Object.freeze(['BTC', 'BTC-USD', 'ETH', 'AR', '__proto__', 'Ω€'])

/** Midnight UTC, so minute, hour and day buckets all start on round numbers. */
export const CRASH_T0 = 1_699_920_000_000
/** In the `minutes` layout, each batch's new records fall in its own 10-minute window after CRASH_T0. */
export const BATCH_SPAN = 600_000
/** In the `hours` layout, batch n's new records fall in hours n .. n + HOURS_PER_BATCH - 1 after CRASH_T0. */
export const HOUR = 3_600_000
export const HOURS_PER_BATCH = 3

/** How a plan spreads its batches over time. */
export type CrashLayout = 'minutes' | 'hours'

/** The first and last millisecond batch `n`'s new records may fall in. */
export function batchWindow(n: number, layout: CrashLayout): { start: number; span: number } {
  return layout === 'minutes' ? { start: CRASH_T0 + n * BATCH_SPAN, span: BATCH_SPAN } : { start: CRASH_T0 + n * HOUR, span: HOURS_PER_BATCH * HOUR }
}

/** Ids whose UTF-8 byte order differs from JavaScript's string order, for timestamp ties. */
const TIE_IDS = ['a', 'b', '\uFF61', '\u{1F600}', 'é']

/** A written record, tagged with the batch that wrote it. */
export interface CrashRecord extends InputRecord {
  batch: number
}

/** A small, fast, seedable PRNG (mulberry32): the same seed always gives the same sequence. */
export function prng(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const SIZES = [1, 1, 3, 3, 20, 20, 100, 100, 400, 400, 1500] as const
const cache = new Map<string, readonly CrashRecord[]>()

/** The records of batch `n` (n >= 1), in write order. */
export function batchRecords(n: number, layout: CrashLayout = 'minutes'): readonly CrashRecord[] {
  const held = cache.get(`${layout}${n}`)
  if (held !== undefined) return held
  const { start, span } = batchWindow(n, layout)
  const random = prng(n * 7919 + 17)
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T
  const size = pick(SIZES)
  const records: CrashRecord[] = []
  for (let i = 0; i < size; i++) {
    const roll = random()
    let symbol = pick(CRASH_SYMBOLS)
    let timestamp = start + Math.floor(random() * span)
    let id = `b${n}-r${i}`
    if (roll < 0.1 && n > 1) {
      // Overwrite a key an earlier batch wrote (in the hours layout, most often in an hour already sealed).
      const earlier = batchRecords(1 + Math.floor(random() * (n - 1)), layout)
      const target = earlier[Math.floor(random() * earlier.length)] as CrashRecord
      ;({ symbol, timestamp, id } = target)
    } else if (roll < 0.14 && records.length > 0) {
      // Overwrite a key of this same batch: the later write wins.
      const target = records[Math.floor(random() * records.length)] as CrashRecord
      ;({ symbol, timestamp, id } = target)
    } else if (roll < 0.2) {
      // Backfill into the past (in the hours layout, into hours already sealed).
      timestamp = CRASH_T0 + Math.floor(random() * (start - CRASH_T0))
    } else if (roll < 0.28) {
      // Several records on one timestamp: the bucket's latest is decided by id bytes.
      timestamp = start + 60_000 * Math.floor(random() * Math.floor(span / 60_000)) + 59_999
      id = `${pick(TIE_IDS)}${n}`
    }
    records.push({
      id,
      symbol,
      provider: CRASH_PROVIDER.id,
      value: n * 100_000 + i + 0.25,
      signature: `sig-${n}-${i}`,
      permawebTx: `tx-${n}-${i}`,
      version: '0.4',
      source: { exchange: n, rank: i },
      timestamp,
      batch: n,
    })
  }
  const frozen = Object.freeze(records)
  cache.set(`${layout}${n}`, frozen)
  return frozen
}

/** The key the store files a record under: (symbol, timestamp, id). */
export function keyOf(record: { symbol: string; timestamp: number; id: string }): string {
  return `${record.symbol}\u0000${record.timestamp}\u0000${record.id}`
}
