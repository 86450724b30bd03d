/**
 * backup(dir) on the suite's backend. The copy is always a classic-level
 * store directory, whatever the source's backend, so this runs on
 * memory-level too: the copy opens by path with the same provider and holds
 * what the store held when the backup began, while the store takes writes;
 * a target holding anything is refused (a leftover of a backup at DIR.partial
 * is removed); an abort leaves nothing behind.
 */
import { mkdir, readdir, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { PriceStore } from '../../../src/index.js'
import type { NewPriceRecord } from '../../../src/index.js'
import { BACKUP_PARTIAL_MARKER } from '../../../src/store/services/backup.js'
import { T0, TEST_PROVIDER, makeRecord } from '../../../src/testing/records.js'
import { rejectsCode } from '../../support/assertions.js'
import { type FeatureTests, useStores } from './context.js'
import { exportLines, layeredWrites, modelExport } from './export.js'
import { HOUR } from './model.js'

export const backupTests: FeatureTests = (suite) => {
  describe('backup', () => {
    const context = useStores(suite)

    async function layered() {
      const store = await context.openStore()
      const writes: NewPriceRecord[] = []
      for (const batch of layeredWrites()) {
        await store.putMany(batch)
        writes.push(...batch)
      }
      return { store, writes }
    }

    it('writes a copy that opens by path with the same provider and holds the records of the moment it began', async () => {
      const { store, writes } = await layered()
      const target = join(context.dir, 'copy')
      const progress: number[] = []
      const backup = store.backup(target, { onProgress: (p) => progress.push(p.records) })
      await store.putMany([makeRecord({ symbol: 'BTC', timestamp: T0 + 6 * HOUR })])
      const result = await backup
      expect(result.location).toBe(target)
      expect(result.stats.records).toBe(modelExport(writes).length)
      expect(progress.length).toBeGreaterThan(0)
      expect(await readdir(context.dir)).not.toContain('copy.partial')
      expect(await readdir(target)).not.toContain(BACKUP_PARTIAL_MARKER)
      const copy = await PriceStore.open(target, { provider: TEST_PROVIDER })
      try {
        expect(await exportLines(copy.export())).toEqual(modelExport(writes))
        expect(await copy.symbols()).toEqual(await store.symbols())
        expect(await copy.latest('BTC', { limit: 50 })).toEqual(await store.latest('BTC', { limit: 50, to: T0 + 5 * HOUR + 1 }))
      } finally {
        await copy.close()
      }
      await rejectsCode(PriceStore.open(target, { provider: { ...TEST_PROVIDER, id: 'other' } }), 'PRICE_PROVIDER_MISMATCH')
    })

    it('keeps the position of the moment it began and the id of its commit, so a cluster node seeded from it follows on from there', async () => {
      const store = await context.openStore()
      await store.putBatch([makeRecord({ symbol: 'BTC', timestamp: T0 })], { position: 7, commitId: 'commit-7' })
      await store.putBatch([makeRecord({ symbol: 'ETH', timestamp: T0 })], { position: 9, commitId: 'commit-9' })
      const target = join(context.dir, 'positioned')
      const backup = store.backup(target)
      await store.putBatch([makeRecord({ symbol: 'BTC', timestamp: T0 + HOUR })], { position: 12, commitId: 'commit-12' })
      await backup
      const copy = await PriceStore.open(target, { provider: TEST_PROVIDER })
      try {
        expect([copy.position, copy.positionId]).toEqual([9, 'commit-9'])
        // Its journal holds that commit alone: a watch from before it is told so; from it, it waits for the next.
        const watch = copy.watch({ after: 7 })[Symbol.asyncIterator]()
        expect((await watch.next()).value).toMatchObject({ type: 'reset', reason: 'trimmed', requested: 7 })
        await watch.return?.()
        expect((await copy.putBatch([makeRecord({ symbol: 'ETH', timestamp: T0 + HOUR })], { position: 10 })).position).toBe(10)
      } finally {
        await copy.close()
      }
    })

    it('refuses a target that is a file or a directory holding anything, and changes nothing; accepts an empty directory', async () => {
      const { store } = await layered()
      const full = join(context.dir, 'full')
      await mkdir(full)
      await writeFile(join(full, 'keep.txt'), 'mine')
      await rejectsCode(store.backup(full), 'PRICE_INVALID_OPTIONS')
      expect(await readdir(full)).toEqual(['keep.txt'])
      const file = join(context.dir, 'file.txt')
      await writeFile(file, 'mine')
      await rejectsCode(store.backup(file), 'PRICE_INVALID_OPTIONS')
      await rejectsCode(store.backup(''), 'PRICE_INVALID_OPTIONS')
      await expect(stat(`${full}.partial`)).rejects.toThrow()
      const empty = join(context.dir, 'empty')
      await mkdir(empty)
      await store.backup(empty)
      expect((await readdir(empty)).length).toBeGreaterThan(0)
    })

    it('removes a backup leftover at DIR.partial, refuses anything else there', async () => {
      const { store } = await layered()
      const target = join(context.dir, 'copy')
      await mkdir(`${target}.partial`)
      await writeFile(join(`${target}.partial`, 'theirs'), 'x')
      await rejectsCode(store.backup(target), 'PRICE_INVALID_OPTIONS')
      expect(await readdir(`${target}.partial`)).toEqual(['theirs'])
      await writeFile(join(`${target}.partial`, BACKUP_PARTIAL_MARKER), '')
      await store.backup(target)
      await expect(stat(`${target}.partial`)).rejects.toThrow()
    })

    it('an aborted backup rejects with PRICE_ABORTED and leaves neither DIR nor DIR.partial', async () => {
      const { store } = await layered()
      const target = join(context.dir, 'aborted')
      const controller = new AbortController()
      controller.abort()
      await rejectsCode(store.backup(target, { signal: controller.signal }), 'PRICE_ABORTED')
      const late = new AbortController()
      await rejectsCode(store.backup(target, { signal: late.signal, onProgress: () => late.abort() }), 'PRICE_ABORTED')
      await expect(stat(target)).rejects.toThrow()
      await expect(stat(`${target}.partial`)).rejects.toThrow()
    })
  })
}
