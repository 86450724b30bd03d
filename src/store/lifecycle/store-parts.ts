/**
 * A store's rooms, made and wired together once, when a `PriceStore` is
 * constructed: the sublevels, the memory a query reads, the write path,
 * upkeep and the services, each handed only what it uses.
 */
import type { AbstractLevel } from 'abstract-level'
import { PriceStoreError } from '../../errors.js'
import { createSublevels, prefixesOf, type StoreSublevels } from '../db/sublevels.js'
import { HeadsIndex } from '../heads/heads-index.js'
import { ReadState } from '../read/read-state.js'
import { StoreReader } from '../read/store-reader.js'
import { CommitJournal } from '../services/watch/commit-journal.js'
import { WatchHub } from '../services/watch/watch-hub.js'
import { SymbolSet } from '../symbols/symbol-set.js'
import { Pruner } from '../upkeep/pruner.js'
import { Sealer } from '../upkeep/sealer.js'
import { Upkeep } from '../upkeep/upkeep.js'
import { IngestVerifier } from '../signatures/ingest-verifier.js'
import { VerdictIndex } from '../signatures/verdict-index.js'
import { BatchWriter } from '../write/batch-writer.js'
import { CommitStep } from '../write/commit-step.js'
import { WriteQueue } from '../write/write-queue.js'
import { StoreLife } from './store-life.js'
import type { ResolvedOptions } from './store-options.js'

/** Every part of one store. */
export interface StoreParts {
  readonly db: AbstractLevel<any, any, any>
  readonly options: ResolvedOptions
  readonly life: StoreLife
  readonly levels: StoreSublevels
  readonly heads: HeadsIndex
  readonly symbols: SymbolSet
  /** What queries read from memory, and the rule for mixing it with the disk. */
  readonly state: ReadState
  readonly reader: StoreReader
  /** Writes, seals and prune turns run one after another in it. */
  readonly queue: WriteQueue
  /** Numbers each batch (its commit position, also its log entries' sequence) and keeps the journal watchers replay. */
  readonly journal: CommitJournal
  /** The live watchers, told of each commit in the step that makes it visible. */
  readonly hub: WatchHub
  /** Moves closed hours from the log into chunks, in the write queue. */
  readonly sealer: Sealer
  readonly upkeep: Upkeep
  readonly step: CommitStep
  readonly writer: BatchWriter
  /** Verifies the signatures of the batches the store takes, per its `signatures` option. */
  readonly ingest: IngestVerifier
  /** The signature verdicts kept with records. */
  readonly verdicts: VerdictIndex
}

/**
 * Makes the parts of a store over `db` (not opened yet).
 * @throws PriceStoreError `PRICE_INVALID_OPTIONS` when the database cannot serve a store
 */
export function assembleStore(db: AbstractLevel<any, any, any>, options: ResolvedOptions): StoreParts {
  if ((db.supports as { getSync?: boolean }).getSync !== true || db.supports.explicitSnapshots !== true) {
    throw new PriceStoreError('PRICE_INVALID_OPTIONS', 'the database must support getSync() and explicit snapshots (abstract-level 3, e.g. classic-level or memory-level)', {
      details: { field: 'db' },
    })
  }
  let levels: StoreSublevels
  try {
    levels = createSublevels(db)
  } catch (err) {
    throw new PriceStoreError(
      'PRICE_INVALID_OPTIONS',
      'the database cannot hold binary keys and values (e.g. memory-level with storeEncoding "utf8"); use one that stores buffers or views',
      { cause: err, details: { field: 'db' } },
    )
  }
  const { provider, sync } = options
  const prefixes = prefixesOf(levels)
  const life = new StoreLife()
  const queue = new WriteQueue()
  const heads = new HeadsIndex(levels.heads, prefixes.heads, provider)
  const symbols = new SymbolSet(levels.symbols, prefixes.symbols)
  const state = new ReadState({
    provider, recordsPerSymbol: options.recordsPerSymbol, headBytes: options.headBytes, chunkBytes: options.chunkBytes,
    db, chunks: levels.chunks, heads, symbols,
  })
  const journal = new CommitJournal(levels.journal, prefixes.journal, { level: levels.meta, prefix: prefixes.meta }, options.journal)
  const hub = new WatchHub()
  const targets = { chunksPrefix: prefixes.chunks, heads }
  const sealer = new Sealer({ db, state, targets, logPrefix: prefixes.log, sync, openBytes: options.openBytes })
  const verdicts = new VerdictIndex(levels.verdicts, prefixes.verdicts, provider)
  const ingest = new IngestVerifier(options.signatures, provider)
  const pruner = new Pruner({ db, state, sealer, chunks: levels.chunks, heads, targets, symbols, verdicts, sync })
  const upkeep = new Upkeep({ life, queue, sealer, pruner })
  const step = new CommitStep({ state, journal, hub, sealer, upkeep })
  const writer = new BatchWriter({ db, sync, provider, life, queue, logPrefix: prefixes.log, journal, symbols, sealer, upkeep, step, ingest, verdicts })
  const reader = new StoreReader(state, () => life.assertOpen(), options.limits)
  return { db, options, life, levels, heads, symbols, state, reader, queue, journal, hub, sealer, upkeep, step, writer, ingest, verdicts }
}
