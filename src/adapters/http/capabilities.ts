/**
 * What a store can do for the HTTP adapter, read once per handler from the
 * store's members, as abstract-level describes a backend in one `supports`
 * manifest. A host may serve `/prices` from anything with `query` (a stub,
 * a proxy); every other endpoint, and each faster path, is served only
 * when the store has what it needs. A `PriceStore` has everything.
 */
export interface StoreSupports {
  /** `plan` and `run`: each request is compiled first (a bad one is answered at once) and weighed before it runs. */
  readonly plans: boolean
  /** `cost`: a plan is weighed from what the store knows of its data; without it, by the plan's `records`. */
  readonly cost: boolean
  /** `runDeferred`: large answers are decoded as they are serialised (preferred to `run`). */
  readonly runDeferred: boolean
  /** `candles`, `symbols`, `latest`, `limits` and `provider`: the UDF endpoints and the chart page. */
  readonly charts: boolean
  /** `watch` and a numeric `position`: the live stream. */
  readonly watch: boolean
  /** `export`: `GET /prices/export`. */
  readonly export: boolean
  /** `stats`: `GET /stats`. */
  readonly stats: boolean
  /** `putMany`: `POST /prices` (with a write token). */
  readonly putMany: boolean
  /** `putBatch`: a write's answer carries its commit position. */
  readonly putBatch: boolean
  /** `symbols` and `latest`: a health check reads the newest record of the first symbol. */
  readonly healthRead: boolean
  /** A numeric `recordsWritten`: the metrics count the records committed. */
  readonly writeCounts: boolean
  /** `quality`: `GET /prices/quality` (feed quality). */
  readonly quality: boolean
  /** `verify`: `GET /prices/verify` (signature reports). */
  readonly verify: boolean
  /** `batchAsOf`: `/prices/batch` (batch as-of). */
  readonly batch: boolean
  /** `feeds`: `GET /feeds` (the feed catalogue). */
  readonly feeds: boolean
}

/**
 * What an endpoint needs beyond `query`: a member of the store's manifest,
 * or what the host configures (a write token, metrics, a backup directory),
 * whose endpoint declines to be built without it.
 */
export type EndpointNeed = 'charts' | 'watch' | 'export' | 'stats' | 'quality' | 'verify' | 'batch' | 'feeds' | ConfiguredNeed

/** The needs the host's options meet, not the store. */
export type ConfiguredNeed = 'writeToken' | 'metrics' | 'backupDir'

const CONFIGURED: ReadonlySet<EndpointNeed> = new Set<ConfiguredNeed>(['writeToken', 'metrics', 'backupDir'])

/** Whether the store meets `need` (a configured need is left to the endpoint's options: met here). */
export function storeMeets(need: EndpointNeed | undefined, supports: StoreSupports): boolean {
  return need === undefined || CONFIGURED.has(need) || supports[need as Exclude<EndpointNeed, ConfiguredNeed>]
}

/** The members {@link supportsOf} looks at. */
interface Members {
  readonly plan?: unknown
  readonly run?: unknown
  readonly cost?: unknown
  readonly runDeferred?: unknown
  readonly candles?: unknown
  readonly symbols?: unknown
  readonly latest?: unknown
  readonly limits?: unknown
  readonly provider?: unknown
  readonly watch?: unknown
  readonly position?: unknown
  readonly export?: unknown
  readonly stats?: unknown
  readonly putMany?: unknown
  readonly putBatch?: unknown
  readonly recordsWritten?: unknown
  readonly quality?: unknown
  readonly verify?: unknown
  readonly batchAsOf?: unknown
  readonly feeds?: unknown
}

/** The manifest of `store`: what it can do, from the members it has now. */
export function supportsOf(store: object): StoreSupports {
  const has = store as Members
  const method = (member: unknown): boolean => typeof member === 'function'
  return {
    plans: has.plan !== undefined && has.run !== undefined,
    cost: has.cost !== undefined,
    runDeferred: has.runDeferred !== undefined,
    charts: method(has.candles) && method(has.symbols) && method(has.latest) && has.limits !== undefined && has.provider !== undefined,
    watch: method(has.watch) && typeof has.position === 'number',
    export: method(has.export),
    stats: method(has.stats),
    putMany: method(has.putMany),
    putBatch: has.putBatch !== undefined,
    healthRead: method(has.symbols) && method(has.latest),
    writeCounts: typeof has.recordsWritten === 'number',
    quality: method(has.quality),
    verify: method(has.verify),
    batch: method(has.batchAsOf),
    feeds: method(has.feeds),
  }
}
