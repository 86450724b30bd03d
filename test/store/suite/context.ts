/**
 * What every feature file of the store suite shares: the backend it runs on
 * ({@link StoreSuiteOptions}, given by test/store/classic-level.test.ts and
 * test/store/memory-level.test.ts) and {@link useStores}, which gives each test a
 * fresh temporary directory, new databases from the backend's factory, and
 * closes every store and database it opened.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { AbstractLevel } from 'abstract-level'
import { afterEach, beforeEach } from 'vitest'
import { PriceStore } from '../../../src/index.js'
import type { PriceStoreOptions } from '../../../src/index.js'
import { TEST_PROVIDER } from '../../../src/testing/records.js'
import { Model, seedRecords } from './model.js'

export type AnyLevel = AbstractLevel<any, any, any>

export interface StoreSuiteOptions {
  /** Shown in the describe title. */
  readonly name: string
  /** A new, unopened database at `dir` (a fresh temporary directory per test; in-memory backends ignore it). */
  readonly factory: (dir: string) => AnyLevel
  /** Whether data outlives the database object (reopen, lock and on-disk corruption cases run only then). */
  readonly persistent?: boolean
}

/** One feature's cases, run on the backend the options describe (abstract-level's `test/*-test.js` shape). */
export type FeatureTests = (options: StoreSuiteOptions) => void

export interface SuiteContext {
  /** This test's temporary directory (removed after the test). */
  readonly dir: string
  /** Options for PriceStore: the test provider, then `extra`. */
  options(extra?: Partial<PriceStoreOptions>): PriceStoreOptions
  /** A new database from the factory, closed after the test. */
  newDb(): AnyLevel
  /**
   * A database holding what the store on `db` wrote, for a reopen: a new
   * one at the same place on a persistent backend, `db` itself otherwise.
   */
  reopenDb(db: AnyLevel): AnyLevel
  /** Closes `store` after the test (for a store made with `new PriceStore`). */
  track(store: PriceStore): PriceStore
  /** An open store on `db` (a new database by default), closed after the test. */
  openStore(extra?: Partial<PriceStoreOptions>, db?: AnyLevel): Promise<PriceStore>
  /** A store holding {@link seedRecords}, written in two batches, and the model of what it holds. */
  seeded(extra?: Partial<PriceStoreOptions>): Promise<{ store: PriceStore; model: Model }>
}

/** Call inside a `describe`: registers the set-up and clean-up of each test and returns its context. */
export function useStores({ factory, persistent = false }: StoreSuiteOptions): SuiteContext {
  let dir = ''
  let stores: PriceStore[] = []
  let dbs: AnyLevel[] = []

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'price-store-suite-'))
    stores = []
    dbs = []
  })

  afterEach(async () => {
    for (const store of stores) await store.close().catch(() => {})
    // abstract-level opens a new database on its own (deferred open), even one no store opened: close them all.
    for (const db of dbs) await db.close().catch(() => {})
    await rm(dir, { recursive: true, force: true })
  })

  const context: SuiteContext = {
    get dir() {
      return dir
    },
    options: (extra = {}) => ({ provider: TEST_PROVIDER, ...extra }),
    newDb() {
      const db = factory(dir)
      dbs.push(db)
      return db
    },
    reopenDb: (db) => (persistent ? context.newDb() : db),
    track(store) {
      stores.push(store)
      return store
    },
    async openStore(extra = {}, db = context.newDb()) {
      const store = await PriceStore.open(db, context.options(extra))
      stores.push(store)
      return store
    },
    async seeded(extra = {}) {
      const store = await context.openStore(extra)
      const records = seedRecords()
      // Two batches, so the data does not all arrive in one write.
      await store.putMany(records.slice(0, 10))
      await store.putMany(records.slice(10))
      return { store, model: new Model().add(records) }
    },
  }
  return context
}
