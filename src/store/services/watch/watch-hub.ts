import type { PriceStoreError } from '../../../errors.js'
import { CommitNotice } from './commit-notice.js'
import { tagOf } from '../../../rules/portable-position.js'
import type { Row } from '../../rows/row.js'

/** A live watcher, as the hub sees it. */
export interface Subscriber {
  /** A commit, in the store's synchronous step after it: must not block. */
  deliver(notice: CommitNotice): void
  /** No more commits: the store closed (no error), or a write failed whose outcome is unknown. */
  end(error?: PriceStoreError): void
}

/**
 * The live watchers of one store. The store publishes each commit in the
 * same synchronous step that makes it visible to queries, after it has
 * taken the commit's position as its head; a watcher that subscribes in
 * one synchronous step with reading that head therefore gets exactly the
 * commits after it.
 */
export class WatchHub {
  readonly #subscribers = new Set<Subscriber>()

  get size(): number {
    return this.#subscribers.size
  }

  subscribe(subscriber: Subscriber): void {
    this.#subscribers.add(subscriber)
  }

  unsubscribe(subscriber: Subscriber): void {
    this.#subscribers.delete(subscriber)
  }

  /** Hands a commit to every watcher; its rows are built only when someone watches. @param commitId the replication log's id of the commit */
  publish(position: number, rows: () => readonly Row[], commitId?: string): void {
    if (this.#subscribers.size === 0) return
    const notice = new CommitNotice(position, rows(), tagOf(commitId))
    for (const subscriber of [...this.#subscribers]) subscriber.deliver(notice)
  }

  /** Ends every watcher and forgets them. */
  end(error?: PriceStoreError): void {
    const subscribers = [...this.#subscribers]
    this.#subscribers.clear()
    for (const subscriber of subscribers) subscriber.end(error)
  }
}
