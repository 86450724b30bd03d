/** The reference model of the TWAP form, computed exactly. */
import type { PriceRecord } from '../../types.js'
import { NearNumber } from '../near-number.js'
import { latestAtOrBefore } from './grid.js'

/**
 * TWAP by its definition: each record is in force from its timestamp until
 * the next record's (the last until `to`); its weight is the part of that
 * inside `[from, to)`. The average is computed exactly (BigInt) and compared
 * within a few units in the last place of the largest value (and, for
 * subnormal values, a smallest double per record).
 */
export function referenceTwap(sorted: readonly PriceRecord[], from: number, to: number): unknown {
  const upTo = sorted.filter((r) => r.timestamp <= to)
  if (upTo.length === 0) return undefined
  const ref = (r: PriceRecord) => ({ id: r.id, timestamp: r.timestamp, value: r.value })
  const start = Math.max(from, upTo[0]!.timestamp)
  const weights = upTo.map((r, i) => {
    const until = i + 1 < upTo.length ? upTo[i + 1]!.timestamp : to
    return Math.max(0, Math.min(until, to) - Math.max(r.timestamp, from))
  })
  const last = upTo.at(-1)!
  const first = latestAtOrBefore(upTo, start)!
  const base = (count: number) => ({ from, to, start, count, first: ref(first), last: ref(last) })
  if (to === start) return { twap: last.value, ...base(1) }
  const used = upTo.filter((_, i) => weights[i]! > 0)
  const exact = exactWeightedMean(used.map((r) => r.value), weights.filter((w) => w > 0), to - start)
  const scale = Math.max(...used.map((r) => Math.abs(r.value)))
  // Units in the last place of the largest value; and with subnormal values, whose products round to a
  // multiple of the smallest double (an error absolute, not relative), about one of those per term.
  return { twap: new NearNumber(exact, scale * 1e-12 + (used.length + 1) * Number.MIN_VALUE), ...base(used.length) }
}

/** Σ values·weights / total, rounded once: values as exact binary fractions, summed as BigInt. */
function exactWeightedMean(values: readonly number[], weights: readonly number[], total: number): number {
  const parts = values.map((v) => {
    const view = new DataView(new ArrayBuffer(8))
    view.setFloat64(0, v)
    const bits = view.getBigUint64(0)
    const sign = bits >> 63n === 1n ? -1n : 1n
    const exponent = Number((bits >> 52n) & 0x7ffn)
    const fraction = bits & ((1n << 52n) - 1n)
    const mantissa = exponent === 0 ? fraction : fraction | (1n << 52n)
    return { mantissa: sign * mantissa, power: (exponent === 0 ? 1 : exponent) - 1075 }
  })
  const low = Math.min(...parts.map((p) => p.power))
  let sum = 0n
  parts.forEach((p, i) => {
    sum += p.mantissa * (1n << BigInt(p.power - low)) * BigInt(weights[i]!)
  })
  // 64 significant bits of the quotient, then its binary exponent applied in two halves (no overflow on the way).
  let quotient = (sum << 128n) / BigInt(total)
  let exponent = low - 128
  const bits = (quotient < 0n ? -quotient : quotient).toString(2).length
  if (bits > 64) {
    quotient >>= BigInt(bits - 64)
    exponent += bits - 64
  }
  const half = Math.trunc(exponent / 2)
  return Number(quotient) * 2 ** half * 2 ** (exponent - half)
}
