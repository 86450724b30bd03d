/**
 * A seeded adversarial write history (issue 20): the batches a messy feed
 * sends, for the write benchmark (write-workloads.ts) and for crash trials.
 * A pure function of its seed: the same seed always gives the same batches
 * of the same records. It depends on generate.ts (itself free of bench-only
 * packages) and on the store's types only, so tests may import it.
 *
 * Shape (defaults): 400 batches of 1..2,000 records (log-uniform, so many
 * tiny batches; about 110k records) over 30 symbols, each record one of:
 * - about 10 %: a rewrite of a record written in an earlier batch (same
 *   symbol, timestamp and id; new value, signature and source);
 * - about 8 %: a tie: a new id at the symbol and timestamp of an earlier
 *   record (both are kept);
 * - the rest: a new record, its timestamp from the batch's mode: live
 *   (each symbol's clock moving forward 10 s a record, with jitter), late
 *   (1 min to 6 h behind the live clock), backfill (a run going forward
 *   from a point far in the past), or anywhere in 0..2^53−1 (with the two
 *   ends themselves now and then).
 * No key appears twice within one batch.
 */
import { BENCH_PROVIDER, Random, START_TIMESTAMP, SYMBOLS, newRecordScratch, newSymbolState, nextRecord, randomUuid } from './generate.js'
import type { GeneratedRecord, SymbolState } from './generate.js'

export interface AdversarialOptions {
  /** Batches to make (default 400). */
  readonly batches?: number
  /** The largest batch (default 2,000); the smallest is 1. */
  readonly maxBatch?: number
  /** Symbols written (default 30, at most 100). */
  readonly symbols?: number
  /** The provider id the records carry (default the bench's provider). */
  readonly provider?: string
}

export const ADVERSARIAL_DEFAULT_SEED = 0xad7e_5a11
const MAX_TIMESTAMP = Number.MAX_SAFE_INTEGER
const MINUTE = 60_000
const HOUR = 3_600_000
const REWRITE_SHARE = 0.1
const TIE_SHARE = 0.08

type Mode = 'live' | 'late' | 'backfill' | 'anywhere'
/** How often each batch mode is drawn: mostly live, as a real feed. */
const MODES: readonly [Mode, number][] = [['live', 0.55], ['late', 0.2], ['backfill', 0.15], ['anywhere', 0.1]]

/** A random safe integer in [0, 2^53−1]. */
function anyTimestamp(random: Random): number {
  const pick = random.next()
  if (pick < 0.02) return 0
  if (pick < 0.04) return MAX_TIMESTAMP
  return (random.nextUint32() & 0x1f_ffff) * 4_294_967_296 + random.nextUint32()
}

function drawMode(random: Random): Mode {
  let x = random.next()
  for (const [mode, weight] of MODES) {
    if ((x -= weight) < 0) return mode
  }
  return 'live'
}

/**
 * The batches of the adversarial history of `seed`. Records are fresh
 * objects, typed as the bench's generated records (assignable to the
 * store's `NewPriceRecord`).
 */
export function adversarialHistory(seed = ADVERSARIAL_DEFAULT_SEED, options: AdversarialOptions = {}): GeneratedRecord[][] {
  const batchCount = options.batches ?? 400
  const maxBatch = options.maxBatch ?? 2_000
  const symbolCount = Math.min(options.symbols ?? 30, SYMBOLS.length)
  const provider = options.provider ?? BENCH_PROVIDER.id
  const random = new Random(seed)
  const scratch = newRecordScratch()
  const states: SymbolState[] = SYMBOLS.slice(0, symbolCount).map((symbol) => newSymbolState(random, symbol))
  const live = states.map(() => START_TIMESTAMP + random.int(30 * 86_400) * 1000)
  // Keys written in earlier batches (symbol index, timestamp, id): what rewrites and ties pick from.
  const written: { s: number; timestamp: number; id: string }[] = []
  const batches: GeneratedRecord[][] = []
  for (let b = 0; b < batchCount; b++) {
    const size = Math.min(maxBatch, Math.max(1, Math.floor(Math.exp(random.next() ** 0.95 * Math.log(maxBatch + 1)))))
    const mode = drawMode(random)
    let backfillAt = START_TIMESTAMP - random.int(365) * 86_400_000 + random.int(86_400) * 1000
    const keys = new Set<string>()
    const batch: GeneratedRecord[] = []
    const fresh: { s: number; timestamp: number; id: string }[] = []
    const push = (s: number, timestamp: number, id?: string): void => {
      const key = `${s}\u0000${timestamp}\u0000${id ?? ''}`
      if (id !== undefined && keys.has(key)) return
      const record = nextRecord(random, states[s] as SymbolState, timestamp, scratch, provider, id)
      keys.add(`${s}\u0000${timestamp}\u0000${record.id}`)
      batch.push(record)
      if (id === undefined) fresh.push({ s, timestamp, id: record.id })
    }
    for (let guard = 0; batch.length < size && guard < size * 4; guard++) {
      const kind = random.next()
      const earlier = written.length > 0 ? written[random.int(written.length)] : undefined
      if (earlier !== undefined && kind < REWRITE_SHARE) {
        push(earlier.s, earlier.timestamp, earlier.id)
        continue
      }
      if (earlier !== undefined && kind < REWRITE_SHARE + TIE_SHARE) {
        push(earlier.s, earlier.timestamp, randomUuid(random, scratch))
        continue
      }
      const s = random.int(symbolCount)
      switch (mode) {
        case 'live': {
          const at = (live[s] as number) + 10_000 + random.int(2_001) - 1_000
          live[s] = Math.min(MAX_TIMESTAMP, at)
          push(s, live[s] as number)
          break
        }
        case 'late':
          push(s, Math.max(0, (live[s] as number) - MINUTE - random.int(6 * HOUR - MINUTE)))
          break
        case 'backfill':
          backfillAt += 1_000 + random.int(20_000)
          push(s, Math.max(0, backfillAt))
          break
        case 'anywhere':
          push(s, anyTimestamp(random))
          break
      }
    }
    written.push(...fresh)
    batches.push(batch)
  }
  return batches
}

/** The key a record replaces on: symbol, timestamp and id. */
export function recordKey(record: { readonly symbol: string; readonly timestamp: number; readonly id: string }): string {
  return `${record.symbol}\u0000${record.timestamp}\u0000${record.id}`
}
