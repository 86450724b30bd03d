/**
 * What a fault scenario found, for the soak script (scripts/cluster-soak.mjs): with
 * `SOAK_LEDGER=FILE` in the environment, each run of a scenario appends one JSON line to FILE
 * before its checks fail or pass; without it, nothing is written. The counts come from the
 * scenario's own checker: the nodes' exports against the model of every acknowledged write.
 */
import { appendFileSync } from 'node:fs'

/** One run of one scenario. */
export interface SoakRun {
  readonly scenario: string
  /** Batches acknowledged to the writers. */
  readonly acknowledged: number
  /** Acknowledged records missing from a node that follows the stream. */
  readonly lost: number
  /** Records a node holds that no writer sent. */
  readonly phantom: number
  /** Nodes at the stream's end whose export differs from the model's. */
  readonly diverged: number
  /** Nodes left stopped (`failed`) at the end. */
  readonly stopped: number
  /** From the fault's end (NATS back) to the cluster taking a write again (ms); -1: no write was taken after it. */
  readonly recoveryMs: number
}

/** Appends the run to the ledger named by `SOAK_LEDGER`, if any. */
export function recordSoakRun(run: SoakRun): void {
  const file = process.env['SOAK_LEDGER']
  if (file !== undefined && file !== '') appendFileSync(file, `${JSON.stringify(run)}\n`)
}

/** How many of `expected` are missing from `held`, and how many of `held` are not in `expected` (exact JSON lines). */
export function compareExports(expected: readonly string[], held: readonly string[]): { readonly lost: number; readonly phantom: number } {
  const have = new Set(held)
  const want = new Set(expected)
  return { lost: expected.filter((line) => !have.has(line)).length, phantom: held.filter((line) => !want.has(line)).length }
}
