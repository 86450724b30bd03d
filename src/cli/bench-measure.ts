import { performance } from 'node:perf_hooks'
import type { BenchForm } from './bench-forms.js'

/** The timing of one form. */
export interface BenchResult {
  readonly form: string
  /** Records the last run answered. */
  readonly records: number
  readonly runs: number
  readonly medianMs: number
  /** Records answered per second at the median time. */
  readonly recordsPerSecond: number
}

/** Times `form` over its runs, one after the other (a query at a time, as one client asks). */
export async function measure(form: BenchForm): Promise<BenchResult> {
  if (form.warmUp) await form.run(0)
  const times: number[] = []
  let records = 0
  for (let i = 0; i < form.runs; i++) {
    const started = performance.now()
    records = await form.run(i)
    times.push(performance.now() - started)
  }
  const medianMs = median(times)
  return { form: form.name, records, runs: form.runs, medianMs, recordsPerSecond: medianMs > 0 ? Math.round((records * 1000) / medianMs) : 0 }
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = sorted.length >> 1
  return sorted.length % 2 === 1 ? (sorted[middle] as number) : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2
}
