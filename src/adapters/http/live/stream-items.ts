import { fieldSelector } from '../../../engine/field-selection.js'
import { portableId } from '../../../rules/portable-position.js'
import type { WatchItem, WatchIterator, WatchOptions, WatchReset } from '../../../store/services/watch/watch-options.js'
import type { FieldSelection } from '../../../types.js'

/*
 * What every live feed of the store's commits (the Server-Sent-Events
 * stream, WebSocket subscriptions) says the same way: where an item leaves
 * the feed, as the id a client resumes after, what a reset says, where a
 * feed without a position starts, and the records with a field selection.
 */

/** What a live feed needs from a store: `PriceStore` has it. */
export interface WatchableStore {
  watch(options: WatchOptions): WatchIterator
  /** The newest commit's position: where a feed without `after` starts. */
  readonly position: number
  /** The replication log's id of the commit at `position`, when it has one: the feed's first id names it. */
  readonly positionId?: string | undefined
}

/** An item's position as a client resumes after it: `P.tag` when its commit has a replication log's id, else `P`. */
export function itemEventId(item: WatchItem): number | string {
  return portableId(item.position, { tag: item.commitTag })
}

/** Where a feed asking for no position starts: the newest commit, named by its portable position when it has an id. */
export function newestPosition(store: WatchableStore): number | string {
  return portableId(store.position, { id: store.positionId })
}

/** The JSON members of a reset after its opening brace: `"reason":...,"requested":R,"position":P`. */
export function resetMembers(item: WatchReset): string {
  return `"reason":${JSON.stringify(item.reason)},"requested":${item.requested},"position":${item.position}`
}

/** The watch with each commit's records selected (a feed's `fields`); the watch itself without a selection. */
export function selectedWatch(selection: FieldSelection | undefined, watch: WatchIterator): WatchIterator {
  if (selection === undefined) return watch
  const select = fieldSelector(selection)
  const selected: WatchIterator = {
    next: async () => {
      const step = await watch.next()
      if (step.done === true || step.value.type !== 'records') return step
      return { done: false, value: { ...step.value, records: step.value.records.map(select) } }
    },
    return: () => watch.return(),
    [Symbol.asyncIterator]: () => selected,
  }
  return selected
}
