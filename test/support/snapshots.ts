import type { MemoryLevel } from 'memory-level'

/** Counts the snapshots a database has open: each read view holds one until it is released. */
export function countSnapshots(db: MemoryLevel<any, any>): { readonly open: number } {
  const counter = { open: 0 }
  const take = db.snapshot.bind(db)
  db.snapshot = (...args: Parameters<typeof take>) => {
    const snapshot = take(...args)
    counter.open++
    const close = snapshot.close.bind(snapshot)
    let closed = false
    snapshot.close = async () => {
      if (!closed) counter.open--
      closed = true
      return close()
    }
    return snapshot
  }
  return counter
}
