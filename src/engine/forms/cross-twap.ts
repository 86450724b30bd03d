import type { CrossOutcome, CrossPoint, CrossRefused, CrossTwap, CrossTwapQuery } from '../../types.js'
import { CrossWalk, derivedSeries, type TimedOutcome } from '../kernels/cross-rate.js'
import { TwapBuilder } from '../kernels/twap.js'
import type { PlanOf } from '../query-plan.js'
import type { ScanRow, ScanSource } from '../scan-source.js'
import { legsRead, readLegs, seriesReads } from './cross-legs.js'
import type { QueryForm } from './query-form.js'

/**
 * The time-weighted average of the derived series over `from..to`, by the
 * TWAP form's own arithmetic (each rate weighs the time until the next
 * change, the last until `to`; kernels/twap.ts). The average starts when
 * both legs are first in force (`start`); from there on every rate must
 * have a value, or the whole average is refused with the first refusal
 * and its time: an average over holes would hide them.
 */
export const crossTwap: QueryForm<CrossTwapQuery> = {
  answerForm: () => 'crossTwap',
  symbols: (query) => [query.quote, query.base],
  reads: (query) => seriesReads(query.from, query.to),
  cost: (plan, counts) => 1 + legsRead(plan.query, counts),
  run: averageOfRates,
}

async function averageOfRates(plan: PlanOf<CrossTwapQuery>, source: ScanSource): Promise<CrossTwap> {
  const { query } = plan
  const legs = await readLegs(plan, source)
  const head = { quote: query.quote, base: query.base, from: query.from, to: query.to }
  const builder = new TwapBuilder(query.from, query.to)
  let first: CrossPoint | undefined
  let last: CrossPoint | undefined
  let latest: TimedOutcome | undefined
  // One pass over the derived series; the rates are distinct milliseconds, so the builder's first and last are these.
  for (const timed of derivedSeries(new CrossWalk(legs.quote, legs.base, query.maxAge), query.from, query.to)) {
    latest = timed
    // Before both legs exist nothing is in force (as before a symbol's first record); a leg never goes away after.
    if (first === undefined && missingLeg(timed.outcome)) continue
    if (!('point' in timed.outcome)) return { ...head, ...refusalAt(timed) }
    first ??= timed.outcome.point
    last = timed.outcome.point
    builder.push(rateRow(timed.at, last.value))
  }
  if (first === undefined || last === undefined) return { ...head, ...neverInForce(latest as TimedOutcome, query.to) }
  const average = builder.finish()!
  return { ...head, twap: average.twap, start: average.start, count: average.count, first, last }
}

function missingLeg(outcome: CrossOutcome): boolean {
  return 'refused' in outcome && (outcome.refused === 'no-quote' || outcome.refused === 'no-base')
}

/** The refusal of the whole average: the refused rate's reason and legs, and when it was in force. */
function refusalAt({ at, outcome }: TimedOutcome): CrossRefused & { readonly at: number } {
  const { refused, legs } = outcome as CrossRefused
  return { refused, legs, at }
}

/**
 * No rate in force by `to` at all: the refusal is the rate at `to`, not at the
 * series' last change. The series holds every change up to `to`, so its last
 * outcome (reason and legs) is still the one in force at `to`.
 */
function neverInForce(latest: TimedOutcome, to: number): CrossRefused & { readonly at: number } {
  return refusalAt({ at: to, outcome: latest.outcome })
}

/** A rate of the series as the TWAP builder takes a row: its value in force from `at`. */
function rateRow(at: number, value: number): ScanRow {
  return {
    timestamp: at,
    ref: () => ({ id: '', timestamp: at, value }),
    record: () => {
      throw new Error('a derived rate has no record')
    },
  }
}
