/**
 * The soak row of a scenario written through a {@link ClusterWriter}: what the checker of ./cluster-checks.ts
 * asserts, counted instead, so a scenario records its row before its assertions pass or fail (a soak must see
 * the bad runs too). The counts are read from the nodes' exports against the writer's ledger:
 * - lost: records of acknowledged batches missing from a node that follows the stream (the worst node);
 * - phantom: records a node holds that no writer sent (the worst node);
 * - diverged: following nodes that lost or invented records, hold a batch in part, or whose export differs from
 *   the one most of the following nodes hold;
 * - stopped: nodes left `failed` at the end, as the scenario counts them.
 */
import type { ClusterWriter } from './cluster-writer.js'
import type { NodeProcess } from './node-process.js'
import { recordSoakRun } from './soak-ledger.js'
import { expected } from '../../support/records.js'

/** How a scenario ended. */
export interface ScenarioEnd {
  /** The nodes that follow the stream at the end (at its last commit). */
  readonly following: readonly NodeProcess[]
  /** Nodes left `failed`. */
  readonly stopped: number
  /** From the fault's end to the cluster taking a write again (ms); undefined: none was taken after it. */
  readonly recoveryMs: number | undefined
}

/** Counts what the checker would find, and appends the row to the soak ledger (when one is named). */
export async function recordWriterRun(scenario: string, writer: ClusterWriter, end: ScenarioEnd): Promise<void> {
  const sent = new Set<string>()
  for (let n = 0; n < writer.sent; n++) for (const line of expectedLines(writer, n)) sent.add(line)
  const acknowledged = writer.acked().flatMap((outcome) => expectedLines(writer, outcome.n))
  const texts = await Promise.all(end.following.map(exportText))
  const common = mostCommon(texts)
  let lost = 0
  let phantom = 0
  let diverged = 0
  for (const text of texts) {
    const held = text.split('\n').filter((line) => line !== '').map((line) => canonical(JSON.parse(line) as Record<string, unknown>))
    const have = new Set(held)
    const missing = acknowledged.filter((line) => !have.has(line)).length
    const invented = held.filter((line) => !sent.has(line)).length
    lost = Math.max(lost, missing)
    phantom = Math.max(phantom, invented)
    if (missing + invented > 0 || text !== common || heldInPart(writer, held)) diverged++
  }
  recordSoakRun({ scenario, acknowledged: writer.acked().length, lost, phantom, diverged, stopped: end.stopped, recoveryMs: end.recoveryMs ?? -1 })
}

/** Batch `n`'s records as an export shows them, each in one canonical text. */
function expectedLines(writer: ClusterWriter, n: number): string[] {
  return writer.records(n).map((record) => canonical(expected(record)))
}

/** A record's JSON with its keys sorted: the export's order of keys is not the model's. */
function canonical(record: Record<string, unknown>): string {
  return JSON.stringify(Object.fromEntries(Object.entries(record).sort(([a], [b]) => a.localeCompare(b))))
}

/** A node's export; one that cannot be read counts as holding nothing (every acknowledged record lost). */
async function exportText(node: NodeProcess): Promise<string> {
  try {
    const { status, body } = await node.get('/prices/export')
    return status === 200 ? body : ''
  } catch {
    return ''
  }
}

function mostCommon(texts: readonly string[]): string | undefined {
  const counts = new Map<string, number>()
  for (const text of texts) counts.set(text, (counts.get(text) ?? 0) + 1)
  return [...counts].sort(([, a], [, b]) => b - a)[0]?.[0]
}

/** Whether a batch is held in part (every batch is applied whole or not at all). */
function heldInPart(writer: ClusterWriter, held: readonly string[]): boolean {
  const perBatch = new Map<number, number>()
  for (const line of held) {
    const n = writer.batchOf(JSON.parse(line) as { timestamp: number })
    perBatch.set(n, (perBatch.get(n) ?? 0) + 1)
  }
  return [...perBatch.values()].some((count) => count !== writer.batchSize)
}
