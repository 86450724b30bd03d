/**
 * The data of the prune crash test, shared by the child (which writes the
 * late records and prunes) and the test (which writes the rest and knows
 * what each record is).
 *
 * `baseRecords()` fill {@link PRUNE_HOURS} hours of every crash symbol, a
 * record every two minutes (sealed before the child starts); `lateRecords()`
 * land in hours already sealed, and in the hour holding a trial's `before`,
 * so the child's prune meets log entries over sealed hours.
 */
import { CRASH_PROVIDER, CRASH_SYMBOLS, CRASH_T0, HOUR, prng } from './crash-plan.js'
import type { CrashRecord } from './crash-plan.js'

export const PRUNE_HOURS = 96
const STEP = 120_000

function record(symbol: string, timestamp: number, id: string, batch: number, value: number): CrashRecord {
  return {
    id, symbol, provider: CRASH_PROVIDER.id, value, signature: `sig-${id}`, permawebTx: `tx-${id}`, version: '0.4',
    source: { symbol, at: timestamp }, timestamp, batch,
  }
}

export function baseRecords(): CrashRecord[] {
  const out: CrashRecord[] = []
  for (const [s, symbol] of CRASH_SYMBOLS.entries()) {
    // The last symbol stops early: a prune past its last hour leaves it empty.
    const hours = s === CRASH_SYMBOLS.length - 1 ? PRUNE_HOURS / 4 : PRUNE_HOURS
    for (let t = CRASH_T0; t < CRASH_T0 + hours * HOUR; t += STEP) out.push(record(symbol, t + s, `r${t}`, 0, t / 1000 + s))
  }
  return out
}

/** Late records for a prune at `before`: some before it, some after, some in its own hour. */
export function lateRecords(before: number): CrashRecord[] {
  const random = prng(before % 1_000_003)
  const hourStart = Math.floor(before / HOUR) * HOUR
  return CRASH_SYMBOLS.slice(0, -1).flatMap((symbol, s) => [
    record(symbol, CRASH_T0 + Math.floor(random() * (before - CRASH_T0)), `late-a${s}`, 1, -s),
    record(symbol, hourStart + Math.floor(random() * HOUR), `late-b${s}`, 1, -s - 0.5),
    record(symbol, before, `late-c${s}`, 1, -s - 0.25),
  ])
}
