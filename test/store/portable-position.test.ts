/**
 * Portable positions: a commit's position and a tag of the replication log's
 * id of that commit (`P.tag`). Each watch item of a commit with an id carries
 * its tag; `watch({ after: 'P.tag' })` resumes after `P` only where the store
 * holds that very commit at `P`, and otherwise starts with a `reset`: `forked`
 * (another commit there, or none), `trimmed` (no longer there to check),
 * `unknown` (past the head). Two stores with the same positions and different
 * commits stand for a node before and after its log was rewritten.
 *
 * The tags are computed from their definition (FNV-1a over the id's UTF-16
 * units, 8 hex digits), not by the code under test.
 */
import { MemoryLevel } from 'memory-level'
import { afterEach, describe, expect, it } from 'vitest'
import { PriceStore, type WatchItem, type WatchIterator } from '../../src/index.js'
import { TEST_PROVIDER as PROVIDER, T0 } from '../../src/testing/records.js'
import { throwsCode } from '../support/assertions.js'
import { rec } from '../support/records.js'
import { referenceCommitTag } from '../support/commit-tag.js'
import { plain } from '../support/watch-items.js'

const open: PriceStore[] = []
afterEach(async () => {
  for (const store of open.splice(0)) await store.close()
})

async function openStore(options: { journal?: { commits: number } } = {}, db = new MemoryLevel()): Promise<PriceStore> {
  const store = await PriceStore.open(db, { provider: PROVIDER, ...options })
  open.push(store)
  return store
}

const tag = referenceCommitTag

const btc = (offset: number) => rec({ symbol: 'BTC', timestamp: T0 + offset })

/** Commits at positions 1..count, each of one record, with ids `${prefix}-${position}` (none when prefix is undefined). */
async function history(store: PriceStore, count: number, prefix: string | undefined, offset = 0): Promise<void> {
  for (let position = 1; position <= count; position++) {
    await store.putBatch([btc(offset + position)], { position, ...(prefix === undefined ? {} : { commitId: `${prefix}-${position}` }) })
  }
}

/** The next `count` items as plain data. */
async function take(watch: WatchIterator, count: number): Promise<unknown[]> {
  const items: unknown[] = []
  for (let i = 0; i < count; i++) {
    const { value, done } = await watch.next()
    if (done === true) throw new Error(`the watch ended after ${JSON.stringify(items)}`)
    items.push(plain(value as WatchItem))
  }
  return items
}

const at = (item: unknown): unknown => {
  const { type, position, commitTag, reason, requested } = item as Record<string, unknown>
  return { type, position, ...(commitTag === undefined ? {} : { commitTag }), ...(reason === undefined ? {} : { reason, requested }) }
}

describe('the commit tag of each watch item', () => {
  it('replayed and live records name their commit by its id\'s tag; a commit without an id has none', async () => {
    const store = await openStore()
    await history(store, 3, 'a')
    await store.putBatch([btc(50)], { position: 4 })
    const watch = store.watch({ after: 0 })
    expect((await take(watch, 4)).map(at)).toEqual([
      { type: 'records', position: 1, commitTag: tag('a-1') },
      { type: 'records', position: 2, commitTag: tag('a-2') },
      { type: 'records', position: 3, commitTag: tag('a-3') },
      { type: 'records', position: 4 },
    ])
    await store.putBatch([btc(60)], { position: 9, commitId: 'live-é\u{1F600}' })
    expect((await take(watch, 1)).map(at)).toEqual([{ type: 'records', position: 9, commitTag: tag('live-é\u{1F600}') }])
    await watch.return()
  })

  it('progress of a filtered watch names the commit it reached', async () => {
    const store = await openStore()
    await history(store, 2, 'a')
    const watch = store.watch({ after: 0, symbols: ['ETH'] })
    expect((await take(watch, 1)).map(at)).toEqual([{ type: 'progress', position: 2, commitTag: tag('a-2') }])
    await watch.return()
  })

  it('the head\'s id is read back from its journal entry after a reopen', async () => {
    const db = new MemoryLevel()
    const store = await openStore({}, db)
    await history(store, 2, 'a')
    await store.putBatch([btc(40)], { position: 3 })
    expect(store.positionId).toBeUndefined()
    await store.putBatch([btc(41)], { position: 4, commitId: 'a-4' })
    await store.close()
    const reopened = await openStore({}, db)
    expect([reopened.position, reopened.positionId]).toEqual([4, 'a-4'])
    const watch = reopened.watch({ after: 1 })
    expect((await take(watch, 3)).map(at)).toEqual([
      { type: 'records', position: 2, commitTag: tag('a-2') },
      { type: 'records', position: 3 },
      { type: 'records', position: 4, commitTag: tag('a-4') },
    ])
    await watch.return()
  })
})

describe('watch({ after: portable position })', () => {
  it('names a commit the store holds there: resumes after it as a plain position does, no reset', async () => {
    const store = await openStore()
    await history(store, 5, 'a')
    const tagged = await take(store.watch({ after: `2.${tag('a-2')}` }), 3)
    const plainAfter = await take(store.watch({ after: 2 }), 3)
    expect(tagged).toEqual(plainAfter)
    expect(tagged.map(at)).toEqual([3, 4, 5].map((position) => ({ type: 'records', position, commitTag: tag(`a-${position}`) })))
  })

  it('names another commit at that position (the log was rewritten): reset `forked` to the head, then live commits only', async () => {
    const before = await openStore()
    await history(before, 5, 'a')
    const rewritten = await openStore()
    await history(rewritten, 6, 'b', 1000)
    const watch = rewritten.watch({ after: `3.${tag('a-3')}` })
    expect((await take(watch, 1)).map(at)).toEqual([{ type: 'reset', position: 6, commitTag: tag('b-6'), reason: 'forked', requested: 3 }])
    await rewritten.putBatch([btc(2000)], { position: 7, commitId: 'b-7' })
    expect((await take(watch, 1)).map(at)).toEqual([{ type: 'records', position: 7, commitTag: tag('b-7') }])
    await watch.return()
  })

  it('at the head: the head\'s own commit resumes live; another commit there is a reset `forked`', async () => {
    const store = await openStore()
    await history(store, 4, 'a')
    const same = store.watch({ after: `4.${tag('a-4')}` })
    const other = store.watch({ after: `4.${tag('x-4')}` })
    expect((await take(other, 1)).map(at)).toEqual([{ type: 'reset', position: 4, commitTag: tag('a-4'), reason: 'forked', requested: 4 }])
    await store.putBatch([btc(100)], { position: 5, commitId: 'a-5' })
    expect((await take(same, 1)).map(at)).toEqual([{ type: 'records', position: 5, commitTag: tag('a-5') }])
    expect((await take(other, 1)).map(at)).toEqual([{ type: 'records', position: 5, commitTag: tag('a-5') }])
    await same.return()
    await other.return()
  })

  it('a commit without an id, or no commit at all at that position, cannot be the one named: reset `forked`', async () => {
    const store = await openStore()
    await history(store, 3, undefined)
    await store.putBatch([btc(10)], { position: 6, commitId: 'a-6' })
    await store.putBatch([btc(11)], { position: 7, commitId: 'a-7' })
    for (const after of [`2.${tag('a-2')}`, `5.${tag('a-5')}`]) {
      const watch = store.watch({ after })
      expect((await take(watch, 1)).map(at)).toEqual([{ type: 'reset', position: 7, commitTag: tag('a-7'), reason: 'forked', requested: Number(after.split('.')[0]) }])
      await watch.return()
    }
  })

  it('a position the journal no longer holds cannot be checked: reset `trimmed`, then the commits it still holds', async () => {
    const store = await openStore({ journal: { commits: 2 } })
    await history(store, 6, 'a')
    const watch = store.watch({ after: `2.${tag('a-2')}` })
    const [reset, ...records] = (await take(watch, 3)).map(at)
    expect(reset).toMatchObject({ type: 'reset', reason: 'trimmed', requested: 2 })
    expect(records).toEqual([5, 6].map((position) => ({ type: 'records', position, commitTag: tag(`a-${position}`) })))
    await watch.return()
  })

  it('past the head: reset `unknown`, as a plain position', async () => {
    const store = await openStore()
    await history(store, 2, 'a')
    const watch = store.watch({ after: `9.${tag('a-9')}` })
    expect((await take(watch, 1)).map(at)).toEqual([{ type: 'reset', position: 2, commitTag: tag('a-2'), reason: 'unknown', requested: 9 }])
    await watch.return()
  })

  it('refuses text that is neither a position nor P.tag, naming `after`', async () => {
    const store = await openStore()
    for (const after of ['2', '2.', '2.abc', '2.0A3F9C12', '2.0a3f9c1', '-1.0a3f9c12', '1.0a3f9c12.1', `${2 ** 53}.0a3f9c12`, ' 2.0a3f9c12']) {
      const err = throwsCode(() => store.watch({ after }), 'PRICE_INVALID_QUERY')
      expect(err.details.parameter).toBe('after')
    }
  })
})
