/**
 * The client's failover rules on their own: the pauses between rounds (exponential, bounded, jittered by the
 * injected random source), the order nodes are tried in, and the error once every node failed.
 */
import { describe, expect, it } from 'vitest'
import { FailoverPlan, backoffDelay } from '../../src/client/backoff.js'

const policy = { rounds: 4, baseDelayMs: 100, maxDelayMs: 500 }

describe('backoffDelay', () => {
  it('doubles from baseDelayMs each round, at most maxDelayMs, jittered between half and all of it', () => {
    expect([0, 1, 2, 3, 4, 10].map((round) => backoffDelay(round, policy, () => 0.999_999))).toEqual([0, 100, 200, 400, 500, 500])
    expect([1, 2, 3, 4].map((round) => backoffDelay(round, policy, () => 0))).toEqual([50, 100, 200, 250])
    expect(backoffDelay(2, policy, () => 0.5)).toBe(150)
    // A random source out of range is clamped: never more than the cap, never less than half of it.
    expect(backoffDelay(1, policy, () => 7)).toBe(100)
    expect(backoffDelay(1, policy, () => -1)).toBe(50)
    expect(backoffDelay(2_000, { rounds: 1, baseDelayMs: 100, maxDelayMs: 1e9 }, () => 1)).toBe(1e9)
  })
})

describe('FailoverPlan', () => {
  it('tries each node once a round from the start, at once within a round, pausing between rounds', () => {
    const plan = new FailoverPlan(['a', 'b', 'c'], { rounds: 2, baseDelayMs: 100, maxDelayMs: 1_000 }, () => 1, 1)
    const attempts = []
    for (let attempt = plan.next(); attempt !== undefined; attempt = plan.next()) attempts.push(attempt)
    expect(attempts).toEqual([
      { index: 1, node: 'b', delayMs: 0 }, { index: 2, node: 'c', delayMs: 0 }, { index: 0, node: 'a', delayMs: 0 },
      { index: 1, node: 'b', delayMs: 100 }, { index: 2, node: 'c', delayMs: 0 }, { index: 0, node: 'a', delayMs: 0 },
    ])
  })

  it('counts its rounds again from a node after a restart, and forgets the failures', () => {
    const plan = new FailoverPlan(['a', 'b'], { rounds: 1, baseDelayMs: 100, maxDelayMs: 100 }, () => 0)
    expect(plan.next()?.node).toBe('a')
    plan.fail({ node: 'a', code: 'PRICE_CLIENT_NETWORK', message: 'refused' })
    plan.restart(1)
    expect([plan.next()?.node, plan.next()?.node, plan.next()]).toEqual(['b', 'a', undefined])
    expect(plan.noNode('x').details.nodes).toEqual([
      { node: 'a', code: 'PRICE_CLIENT_NETWORK', message: 'not tried' },
      { node: 'b', code: 'PRICE_CLIENT_NETWORK', message: 'not tried' },
    ])
  })

  it('gives PRICE_CLIENT_NO_NODE with each node\'s last error, in the order of the nodes', () => {
    const plan = new FailoverPlan(['a', 'b'], { rounds: 2, baseDelayMs: 1, maxDelayMs: 1 }, () => 0)
    plan.fail({ node: 'b', code: 'HTTP_BUSY', message: 'busy', status: 503 })
    plan.fail({ node: 'a', code: 'PRICE_CLIENT_NETWORK', message: 'refused' })
    plan.fail({ node: 'a', code: 'PRICE_CLIENT_TIMEOUT', message: 'slow' })
    const error = plan.noNode('GET /prices')
    expect(error.code).toBe('PRICE_CLIENT_NO_NODE')
    expect(error.details.nodes).toEqual([
      { node: 'a', code: 'PRICE_CLIENT_TIMEOUT', message: 'slow' },
      { node: 'b', code: 'HTTP_BUSY', message: 'busy', status: 503 },
    ])
    expect(error.message).toContain('b: HTTP_BUSY (503) busy')
  })
})
