/** Types of cluster-soak-table.mjs, for its test. */
import type { SoakRun as LedgerLine } from '../test/cluster/support/soak-ledger.js'

export interface Soak {
  readonly id: string
  readonly description: string
  readonly failures: { readonly run: number; readonly output: string }[]
}
export interface Row {
  readonly scenario: string
  readonly cells: string[]
  readonly soak: string
}
/** One line of a soak's ledger: one run of one scenario. */
export type { LedgerLine }
export declare function rowsOfLedger(lines: readonly LedgerLine[], soak: string): Row[]
export declare function readSoakTable(text: string): { soaks: Map<string, Soak>; rows: Row[] }
export declare function mergeSoak(existingText: string, soak: Soak, rows: readonly Row[]): string
export declare function renderSoakTable(soaks: readonly Soak[], rows: readonly Row[]): string
