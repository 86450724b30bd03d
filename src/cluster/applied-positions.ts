/**
 * What the nodes of a cluster have applied, as they say it: each node
 * reports the newest position it applied (after every commit it applies,
 * and once a second), and a node taking a write counts, for the write's
 * position, the distinct nodes that reported it or a later one, until
 * enough of them did (the write concern). A report is a promise about the
 * node's own disk, so a node counts once whatever it reports, and a node
 * that restarts under the same id is the same disk counted once.
 */

import { createHash } from 'node:crypto'

/** What a node says of itself on the cluster's report subject. */
export interface AppliedReport {
  /** The node's id (`ClusterOptions.nodeId`): the same across its restarts. */
  readonly node: string
  /** The newest position its store applied. */
  readonly position: number
  /** True once the node stopped applying (it holds what it applied, and applies no more). */
  readonly failed?: boolean
}

/** A node as another one last heard of it. */
export interface PeerStatus {
  readonly node: string
  readonly position: number
  /** Milliseconds since its last report. */
  readonly heardAgoMs: number
}

interface Wait {
  readonly position: number
  readonly needed: number
  readonly done: (count: number) => void
}

/** Node ids are printable and short; anything else in a report is not from a node of this release. */
const NODE_ID = /^[\x21-\x7e]{1,128}$/

/**
 * Reads a report off the wire; `undefined` for anything that is not one (it is ignored: a report only ever lets a
 * write answer sooner, never changes what a node applies).
 */
export function parseAppliedReport(data: Uint8Array): AppliedReport | undefined {
  try {
    const value = JSON.parse(Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('utf8')) as { node?: unknown; position?: unknown; failed?: unknown }
    if (typeof value.node !== 'string' || !NODE_ID.test(value.node)) return undefined
    if (typeof value.position !== 'number' || !Number.isSafeInteger(value.position) || value.position < 0) return undefined
    return { node: value.node, position: value.position, ...(value.failed === true ? { failed: true } : {}) }
  } catch {
    return undefined
  }
}

/** A report as it goes on the wire. */
export function encodeAppliedReport(report: AppliedReport): Uint8Array {
  return Buffer.from(JSON.stringify({ node: report.node, position: report.position, ...(report.failed === true ? { failed: true } : {}) }), 'utf8')
}

/**
 * A node id made of `text` (a host name, a path): characters an id cannot hold become `_`, and a text too long is
 * cut, a hash of the whole kept, so that two long texts still give two ids.
 */
export function nodeIdOf(text: string): string {
  const id = text.replace(/[^\x21-\x7e]/g, '_') || 'node'
  return id.length <= 128 ? id : `${id.slice(0, 100)}.${createHash('sha256').update(id).digest('hex').slice(0, 16)}`
}

/** Whether `id` can name a node. */
export function isNodeId(id: unknown): id is string {
  return typeof id === 'string' && NODE_ID.test(id)
}

/** The newest position each node reported, and the writes waiting for enough of them. */
export class AppliedPositions {
  readonly #newest = new Map<string, { position: number; failed: boolean; at: number }>()
  readonly #waits = new Set<Wait>()

  /**
   * Takes a node's report, which replaces the one before (a node's reports arrive in the order it sent them; a node
   * whose store was replaced reports a lower position, and is counted at it).
   */
  record(report: AppliedReport, now = Date.now()): void {
    this.#newest.set(report.node, { position: report.position, failed: report.failed === true, at: now })
    for (const wait of this.#waits) {
      const count = this.count(wait.position)
      if (count >= wait.needed) {
        this.#waits.delete(wait)
        wait.done(count)
      }
    }
  }

  /** How many nodes reported `position` or a later one. */
  count(position: number): number {
    let count = 0
    for (const { position: newest } of this.#newest.values()) if (newest >= position) count++
    return count
  }

  /**
   * Resolves with the number of nodes that applied `position` once `needed` of them did, or with the number that had
   * when `timeoutMs` passed or `signal` aborted (fewer than `needed`).
   */
  wait(position: number, needed: number, timeoutMs: number, signal?: AbortSignal): Promise<number> {
    const now = this.count(position)
    if (now >= needed || timeoutMs <= 0 || signal?.aborted) return Promise.resolve(now)
    return new Promise((resolve) => {
      const timer = setTimeout(() => finish(this.count(position)), timeoutMs)
      const onAbort = (): void => finish(this.count(position))
      const wait: Wait = { position, needed, done: (count) => finish(count) }
      const finish = (count: number): void => {
        clearTimeout(timer)
        signal?.removeEventListener('abort', onAbort)
        this.#waits.delete(wait)
        resolve(count)
      }
      signal?.addEventListener('abort', onAbort, { once: true })
      this.#waits.add(wait)
    })
  }

  /**
   * The newest position a node that still applies reported since `since` (ms since the epoch), and the nodes heard
   * from since then.
   */
  heldSince(since: number): { readonly position: number; readonly nodes: ReadonlySet<string> } {
    let position = 0
    const nodes = new Set<string>()
    for (const [node, report] of this.#newest) {
      if (report.at < since) continue
      nodes.add(node)
      if (!report.failed) position = Math.max(position, report.position)
    }
    return { position, nodes }
  }

  /** The nodes that still applied when last heard from, heard from since `since`. */
  applyingSince(since: number): string[] {
    return [...this.#newest].filter(([, report]) => report.at >= since && !report.failed).map(([node]) => node)
  }

  /** Every node heard of, newest position first. */
  peers(now = Date.now()): PeerStatus[] {
    return [...this.#newest].map(([node, { position, at }]) => ({ node, position, heardAgoMs: Math.max(0, now - at) }))
      .sort((a, b) => b.position - a.position || (a.node < b.node ? -1 : 1))
  }

  /** Ends every wait with the count it has (the node is stopping). */
  cancelAll(): void {
    for (const wait of [...this.#waits]) wait.done(this.count(wait.position))
  }
}
