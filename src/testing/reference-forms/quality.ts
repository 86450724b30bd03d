/**
 * The reference model of the feed-quality report (`store.quality()`),
 * written from its definition in docs/semantics.md ("Feed quality") as
 * plainly as possible: whole sorted arrays, every pair of consecutive
 * records, filters per bucket. It shares no code with the engine's kernel.
 */
import type { PriceRecord } from '../../types.js'
import { compareRecords, compareUtf8 } from '../reference-model.js'

/** What the model is asked: `store.quality()`'s options, `now` given. */
export interface ReferenceQualityOptions {
  readonly symbols?: readonly string[]
  readonly from: number
  readonly to: number
  readonly now: number
  readonly interval?: number
  readonly origin?: number
  readonly gapThreshold?: number
  readonly sources?: boolean
  readonly moves?: boolean
}

const LISTED_GAPS = 1000
const LISTED_DUPLICATES = 100
const LISTED_SINGLE = 100
const MOVES = 3

/** The report `store.quality(options)` must give over the stored `records`. */
export function referenceQuality(records: readonly PriceRecord[], options: ReferenceQualityOptions): unknown {
  const stored = [...new Set(records.map((r) => r.symbol))].sort(compareUtf8)
  const symbols = options.symbols === undefined ? stored : [...new Set(options.symbols)]
  return {
    from: options.from,
    to: options.to,
    now: options.now,
    ...(options.interval === undefined ? {} : { interval: options.interval }),
    gapThreshold: options.gapThreshold ?? null,
    symbols: symbols.map((symbol) => {
      const sorted = records.filter((r) => r.symbol === symbol && r.timestamp >= options.from && r.timestamp <= options.to).sort(compareRecords)
      return symbolReport(symbol, sorted, options)
    }),
  }
}

function symbolReport(symbol: string, sorted: readonly PriceRecord[], options: ReferenceQualityOptions): unknown {
  const gaps = gapsOf(sorted)
  const stats = statistics(gaps.map((g) => g.length))
  const threshold = options.gapThreshold ?? (stats.median === null ? null : 3 * stats.median)
  const over = threshold === null ? [] : gaps.filter((g) => g.length > threshold)
  const last = sorted.at(-1)
  return {
    symbol,
    records: sorted.length,
    firstTimestamp: sorted[0]?.timestamp ?? null,
    lastTimestamp: last?.timestamp ?? null,
    age: last === undefined ? null : options.now - last.timestamp,
    gaps: { count: gaps.length, ...stats, threshold, over: over.length, list: over.slice(0, LISTED_GAPS), truncated: over.length > LISTED_GAPS },
    moves: options.moves === false ? null : movesOf(sorted),
    duplicates: duplicatesOf(sorted),
    ...(options.interval === undefined ? {} : { buckets: bucketsOf(sorted, gaps, threshold, options) }),
    ...(options.sources === true ? { sources: sourcesOf(sorted) } : {}),
  }
}

interface Gap {
  readonly start: number
  readonly end: number
  readonly length: number
}

/** The gaps between consecutive distinct timestamps. */
function gapsOf(sorted: readonly PriceRecord[]): Gap[] {
  const times = [...new Set(sorted.map((r) => r.timestamp))]
  return times.slice(1).map((end, i) => ({ start: times[i]!, end, length: end - times[i]! }))
}

/** Lower median, p99 (nearest rank: the ⌈p·n⌉-th smallest) and max. */
function statistics(lengths: readonly number[]): { median: number | null; p99: number | null; max: number | null } {
  if (lengths.length === 0) return { median: null, p99: null, max: null }
  const sorted = [...lengths].sort((a, b) => a - b)
  const rank = (p: number) => sorted[Math.max(1, Math.ceil(p * sorted.length)) - 1]!
  return { median: rank(0.5), p99: rank(0.99), max: sorted.at(-1)! }
}

interface Move {
  readonly from: { id: string; timestamp: number; value: number }
  readonly to: { id: string; timestamp: number; value: number }
  readonly change: number
  readonly relative: number | null
}

/** Every move between consecutive records, in order. */
function allMoves(sorted: readonly PriceRecord[]): Move[] {
  return sorted.slice(1).map((r, i) => {
    const before = sorted[i]!
    const change = r.value - before.value
    return {
      from: { id: before.id, timestamp: before.timestamp, value: before.value },
      to: { id: r.id, timestamp: r.timestamp, value: r.value },
      change,
      relative: before.value === 0 ? null : change / Math.abs(before.value),
    }
  })
}

/** The largest `count` moves by `key` (non-zero keys only), largest first, a tie to the earlier move (a stable sort). */
function largest(moves: readonly Move[], key: (move: Move) => number | null, count: number): Move[] {
  return moves
    .filter((m) => (key(m) ?? 0) > 0)
    .sort((a, b) => (key(b) as number) - (key(a) as number) || 0)
    .slice(0, count)
}

function movesOf(sorted: readonly PriceRecord[]): unknown {
  const moves = allMoves(sorted)
  return {
    largest: largest(moves, (m) => Math.abs(m.to.value - m.from.value), MOVES),
    largestRelative: largest(moves, (m) => (m.from.value === 0 ? null : Math.abs(m.to.value - m.from.value) / Math.abs(m.from.value)), MOVES),
  }
}

function duplicatesOf(sorted: readonly PriceRecord[]): unknown {
  const groups = [...new Set(sorted.map((r) => r.timestamp))]
    .map((timestamp) => ({ timestamp, ids: sorted.filter((r) => r.timestamp === timestamp).map((r) => r.id) }))
    .filter((group) => group.ids.length > 1)
  return {
    records: sorted.length - new Set(sorted.map((r) => r.timestamp)).size,
    timestamps: groups.length,
    list: groups.slice(0, LISTED_DUPLICATES),
    truncated: groups.length > LISTED_DUPLICATES,
  }
}

function bucketsOf(sorted: readonly PriceRecord[], gaps: readonly Gap[], threshold: number | null, options: ReferenceQualityOptions): unknown[] {
  const interval = options.interval!
  const rest = (options.origin ?? 0) % interval
  const origin = rest < 0 ? rest + interval : rest
  const bucket = (t: number) => Math.floor((t - origin) / interval)
  const moves = allMoves(sorted)
  const out: unknown[] = []
  for (let k = bucket(options.from); k <= bucket(options.to); k++) {
    const inside = sorted.filter((r) => bucket(r.timestamp) === k)
    const ended = gaps.filter((g) => bucket(g.end) === k)
    const endedMoves = moves.filter((m) => bucket(m.to.timestamp) === k)
    out.push({
      start: origin + k * interval,
      records: inside.length,
      firstTimestamp: inside[0]?.timestamp ?? null,
      lastTimestamp: inside.at(-1)?.timestamp ?? null,
      gaps: { count: ended.length, ...statistics(ended.map((g) => g.length)), over: threshold === null ? 0 : ended.filter((g) => g.length > threshold).length },
      duplicates: endedMoves.filter((m) => m.to.timestamp === m.from.timestamp).length,
      largestMove: options.moves === false ? null : largest(endedMoves, (m) => Math.abs(m.to.value - m.from.value), 1)[0] ?? null,
    })
  }
  return out
}

function sourcesOf(sorted: readonly PriceRecord[]): unknown {
  const numeric = (r: PriceRecord) =>
    (typeof r.source === 'object' && r.source !== null && !Array.isArray(r.source) ? Object.values(r.source) : []).filter(
      (v): v is number => typeof v === 'number' && Number.isFinite(v),
    )
  const counts: Record<string, number> = {}
  for (const r of sorted) counts[numeric(r).length] = (counts[numeric(r).length] ?? 0) + 1
  const singles = sorted.filter((r) => numeric(r).length === 1)
  const spreads = sorted
    .filter((r) => numeric(r).length > 0 && r.value !== 0)
    .map((r) => ({ id: r.id, timestamp: r.timestamp, value: r.value, min: Math.min(...numeric(r)), max: Math.max(...numeric(r)) }))
    .map((w) => ({ ...w, spread: (w.max - w.min) / Math.abs(w.value) }))
  const widest = spreads.reduce<(typeof spreads)[number] | null>((best, w) => (best === null || w.spread > best.spread ? w : best), null)
  return {
    counts,
    singleSource: singles.length,
    singleSourceRecords: singles.slice(0, LISTED_SINGLE).map((r) => ({ id: r.id, timestamp: r.timestamp })),
    widest,
  }
}
