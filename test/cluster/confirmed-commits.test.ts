/**
 * A consumer reading a copy of the stream that disagrees with the leader
 * (nats-server 2.9 after a partition) still yields the leader's commits:
 * checked against the leader's own list, for any history and any ranges of
 * positions where the copy holds other messages.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { confirmedCommits, type StreamMessage, type StreamReads } from '../../src/cluster/confirmed-commits.js'

/** A stream as the leader holds it and as one other server's copy holds it. */
interface Copies {
  readonly leader: readonly StreamMessage[]
  readonly copy: readonly StreamMessage[]
}

const message = (position: number, kind: 'commit' | 'part', id: string | undefined): StreamMessage =>
  ({ position, kind, id, provider: 'p', data: Buffer.from(`${kind}:${id ?? position}`) })

/** Reads of `copies`: the consumer gives the copy's commits (then stops, as an idle consumer would wait). */
function reads({ leader, copy }: Copies, disagreements: number[]): StreamReads {
  return {
    async *consume(after, signal) {
      for (const m of copy) {
        if (signal.aborted) return
        if (m.position > after && m.kind === 'commit') yield m
      }
    },
    leaderAt: async (position) => leader[position - 1],
    leaderLast: async () => leader.length,
    partsOf: () => [],
    onDisagreement: (position) => disagreements.push(position),
  }
}

async function collect(source: AsyncIterable<StreamMessage | { position: number; id?: string | undefined }>): Promise<{ position: number; id: string | undefined }[]> {
  const out: { position: number; id: string | undefined }[] = []
  for await (const { position, id } of source) out.push({ position, id })
  return out
}

const leaderCommits = (leader: readonly StreamMessage[], after: number): { position: number; id: string | undefined }[] =>
  leader.filter((m) => m.kind === 'commit' && m.position > after).map(({ position, id }) => ({ position, id }))

/** A history of n messages, commits and parts, every id unique. */
const historyArb = fc.array(fc.boolean(), { minLength: 1, maxLength: 60 })
  .map((kinds) => kinds.map((isCommit, i) => message(i + 1, isCommit ? 'commit' : 'part', `L${i + 1}`)))

/**
 * The history and a copy with ranges where it holds other messages (the writes the other side of a partition took),
 * then one more commit that both hold.
 */
const copiesArb = historyArb.chain((leader) => fc.record({
  leader: fc.constant(leader),
  ranges: fc.array(fc.tuple(fc.nat({ max: leader.length - 1 }), fc.nat({ max: 5 }), fc.array(fc.boolean(), { minLength: 6, maxLength: 6 })), { maxLength: 3 }),
  after: fc.nat({ max: leader.length }),
})).map(({ leader, ranges, after }) => {
  const copy = [...leader]
  for (const [start, length, kinds] of ranges) {
    const end = Math.min(copy.length, start + length + 1)
    for (let i = start; i < end; i++) copy[i] = message(i + 1, kinds[i - start] === true || i === start ? 'commit' : 'part', `C${i + 1}`)
  }
  // The next write reaches every copy: a copy that holds no commit of its own at its end is noticed then.
  const next = message(leader.length + 1, 'commit', `L${leader.length + 1}`)
  return { leader: [...leader, next], copy: [...copy, next], after }
})

describe('confirmedCommits', () => {
  it('yields the leader\'s commits after the position asked, in order, none skipped or repeated, whatever the copy the consumer reads', async () => {
    await fc.assert(fc.asyncProperty(copiesArb, async ({ leader, copy, after }) => {
      const disagreements: number[] = []
      const got = await collect(confirmedCommits(reads({ leader, copy }, disagreements), after, new AbortController().signal))
      expect(got).toEqual(leaderCommits(leader, after))
      // Noticed wherever the copy holds another commit than the leader, or a commit where it holds none, or none where it holds one.
      const commitAt = (m: StreamMessage): string | undefined => (m.kind === 'commit' ? m.id : undefined)
      const differs = copy.some((m, i) => m.position > after && commitAt(m) !== commitAt(leader[i]!))
      expect(disagreements.length > 0).toBe(differs)
    }), { numRuns: 300 })
  })

  it('a copy holding another commit at one position (the soak\'s case): the leader\'s commit is applied there, and the ones after', async () => {
    const leader = [message(1, 'commit', 'a'), message(2, 'part', 'b.0'), message(3, 'commit', 'b'), message(4, 'commit', 'Y'), message(5, 'commit', 'c')]
    const copy = [...leader.slice(0, 3), message(4, 'commit', 'X'), leader[4]!]
    const disagreements: number[] = []
    expect(await collect(confirmedCommits(reads({ leader, copy }, disagreements), 0, new AbortController().signal)))
      .toEqual([{ position: 1, id: 'a' }, { position: 3, id: 'b' }, { position: 4, id: 'Y' }, { position: 5, id: 'c' }])
    expect(disagreements).toEqual([4])
  })

  it('a copy holding a part where the leader holds a commit: the commit is not skipped', async () => {
    const leader = [message(1, 'commit', 'a'), message(2, 'commit', 'b'), message(3, 'part', 'c.0'), message(4, 'commit', 'c')]
    const copy = [leader[0]!, message(2, 'part', 'x.0'), message(3, 'commit', 'x'), leader[3]!]
    expect(await collect(confirmedCommits(reads({ leader, copy }, []), 0, new AbortController().signal)))
      .toEqual([{ position: 1, id: 'a' }, { position: 2, id: 'b' }, { position: 4, id: 'c' }])
  })

  it('commits without ids are the same when their bytes are', async () => {
    const leader = [message(1, 'commit', undefined), message(2, 'commit', undefined)]
    const copy = [leader[0]!, { ...leader[1]!, data: Buffer.from('other bytes') }]
    const disagreements: number[] = []
    expect(await collect(confirmedCommits(reads({ leader, copy }, disagreements), 0, new AbortController().signal)))
      .toEqual([{ position: 1, id: undefined }, { position: 2, id: undefined }])
    expect(disagreements).toEqual([2])
  })

  it('ends when its signal aborts, even in the middle of reading from the leader', async () => {
    const leader = Array.from({ length: 10 }, (_, i) => message(i + 1, 'commit', `L${i + 1}`))
    const copy = leader.map((m) => message(m.position, 'commit', `C${m.position}`))
    const controller = new AbortController()
    const got: number[] = []
    for await (const { position } of confirmedCommits(reads({ leader, copy }, []), 0, controller.signal)) {
      got.push(position)
      if (position === 3) controller.abort()
    }
    expect(got).toEqual([1, 2, 3])
  })
})
