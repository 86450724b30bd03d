/**
 * What every case family gets: the opened store, the data set's shape, the
 * time budget and a seeded random source for the query parameters
 * ({@link QueryContext}, all a store-only run has), and in a full run both
 * SQLite layouts and the LevelDB floor too.
 */
import type { PriceStore } from '../src/index.js'
import type { LevelFloor } from './floor.js'
import type { DataShape, Random } from './generate.js'
import type { Budget, Strategy } from './measure.js'
import type { SqliteBaseline, SqliteLayout } from './sqlite-baseline.js'
import { SQLITE_LAYOUTS } from './sqlite-baseline.js'

/** What a family's cases are built from, in full runs and store-only runs alike. */
export interface QueryContext {
  readonly shape: DataShape
  readonly store: PriceStore
  readonly budget: Budget
  readonly random: Random
  readonly quick: boolean
  /** Printed under the results, e.g. why a case was skipped. */
  note(text: string): void
}

/** What a family gets in a full run: the store's context, SQLite and the floor. */
export interface FamilyContext extends QueryContext {
  readonly sqlite: Readonly<Record<SqliteLayout, SqliteBaseline>>
  readonly floor: LevelFloor
}

/** One SQLite plan per layout (and per query strategy when given), named `layout` or `layout/strategy`. */
export function sqlitePlans<P, S extends string>(
  ctx: Pick<FamilyContext, 'sqlite'>,
  strategies: readonly S[] | undefined,
  run: (db: SqliteBaseline, param: P, strategy: S) => unknown,
  applies: (param: P, strategy: S) => boolean = () => true,
): Strategy<P>[] {
  return SQLITE_LAYOUTS.flatMap((layout) =>
    (strategies ?? [undefined as unknown as S]).map((strategy) => ({
      name: strategy === undefined ? layout : `${layout}/${strategy}`,
      applies: (param: P) => applies(param, strategy),
      run: (param: P) => run(ctx.sqlite[layout], param, strategy),
    })),
  )
}

/** A random symbol of the data set. */
export function randomSymbol(ctx: QueryContext): string {
  return ctx.shape.symbols[ctx.random.int(ctx.shape.symbols.length)] as string
}

/** A random integer timestamp in [lo, hi]. */
export function randomTime(ctx: QueryContext, lo: number, hi: number): number {
  return lo + Math.floor(ctx.random.next() * (hi - lo + 1))
}
