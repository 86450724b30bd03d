import { PriceClientError, type NodeFailure } from './client-errors.js'
import type { RetryPolicy } from './client-options.js'
import type { ClientTimers } from './transport-types.js'

/**
 * The pause before round `round` (1 for the second round): `baseDelayMs·2^(round−1)`, at most `maxDelayMs`, then
 * jittered to between half of it and all of it, so clients that lost the same node do not come back in step.
 */
export function backoffDelay(round: number, policy: RetryPolicy, random: () => number): number {
  if (round <= 0) return 0
  const cap = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.min(round - 1, 52))
  const draw = Math.min(Math.max(random(), 0), 1)
  return Math.round(cap / 2 + (cap / 2) * draw)
}

/** One attempt a {@link FailoverPlan} hands out: the node to try, and the pause to wait first. */
export interface Attempt {
  readonly index: number
  readonly node: string
  readonly delayMs: number
}

/**
 * The order a call tries the nodes in: each node once per round, from the one it starts at, at once within a
 * round (another node is the quickest way around a dead one), with a {@link backoffDelay} pause between
 * rounds, for at most `rounds` rounds. It keeps each node's last failure for `PRICE_CLIENT_NO_NODE`.
 */
export class FailoverPlan {
  readonly #nodes: readonly string[]
  readonly #policy: RetryPolicy
  readonly #random: () => number
  readonly #failures = new Map<string, NodeFailure>()
  #start: number
  #attempt = 0

  constructor(nodes: readonly string[], policy: RetryPolicy, random: () => number, start = 0) {
    this.#nodes = nodes
    this.#policy = policy
    this.#random = random
    this.#start = start % nodes.length
  }

  /** The next attempt, or undefined once every round is spent. */
  next(): Attempt | undefined {
    const n = this.#nodes.length
    const k = this.#attempt
    const round = Math.floor(k / n)
    if (round >= this.#policy.rounds) return undefined
    this.#attempt++
    const index = (this.#start + k) % n
    const delayMs = k > 0 && k % n === 0 ? backoffDelay(round, this.#policy, this.#random) : 0
    return { index, node: this.#nodes[index]!, delayMs }
  }

  /** Notes a node's failure; the next attempt goes on to the next node. */
  fail(failure: NodeFailure): void {
    this.#failures.set(failure.node, failure)
  }

  /** A call that got through (a subscription subscribed): the rounds count again from `index`, the failures forgotten. */
  restart(index: number): void {
    this.#start = index % this.#nodes.length
    this.#attempt = 0
    this.#failures.clear()
  }

  /** The error once every round is spent: each node's last failure in `details.nodes`. */
  noNode(what: string): PriceClientError {
    const nodes = this.#nodes.map((node) => this.#failures.get(node) ?? { node, code: 'PRICE_CLIENT_NETWORK', message: 'not tried' })
    const summary = nodes.map((failure) => `${failure.node}: ${failure.code}${failure.status === undefined ? '' : ` (${failure.status})`} ${failure.message}`).join('; ')
    return new PriceClientError('PRICE_CLIENT_NO_NODE', `${what}: every node failed, ${this.#policy.rounds} round(s): ${summary}`, { details: { nodes } })
  }
}

/**
 * Waits `ms` on `timers`; resolves early (false) when `signal` aborts, else true. A pause of 0 still lets other
 * tasks run first, so a loop of failures cannot starve its caller.
 */
export function pause(ms: number, timers: ClientTimers, signal: AbortSignal | undefined): Promise<boolean> {
  if (signal?.aborted === true) return Promise.resolve(false)
  return new Promise((resolve) => {
    const onAbort = (): void => {
      timers.clearTimeout(handle)
      resolve(false)
    }
    const handle = timers.setTimeout(() => {
      signal?.removeEventListener('abort', onAbort)
      resolve(true)
    }, ms)
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}
