import { asBuffer } from '../../keys/bytes.js'
import { describeLog, readLogKey } from '../../keys/key-layout.js'
import { undecodable } from '../../keys/entry-errors.js'
import type { Provider } from '../../types.js'
import type { BytesSublevel } from '../db/sublevels.js'
import { OpenArea } from '../rows/open-area.js'
import type { OpenWrite } from '../rows/open-area.js'
import { openWrite } from './open-write.js'

/** What the log holds when the store opens. */
export interface ReplayedLog {
  /** The records written and not yet sealed, in commit order. */
  readonly area: OpenArea
  /** One more than the greatest log sequence: the next commit must not reuse a log key. */
  readonly nextSequence: number
  /** The newest timestamp among them (0 when none). */
  readonly horizon: number
}

/**
 * Bytes the log's iterator brings per round trip to LevelDB's thread. Its default (classic-level's 16 KB) is about
 * one log entry, so replaying a full open area (up to `openBytes`, 64 MiB by default) after a crash made thousands
 * of round trips: this took such a replay from about 410 to 340 ms. The whole log is held in memory once replayed
 * anyway.
 */
const REPLAY_READ_BYTES = 4 * 1024 * 1024

/**
 * Reads the log into a new open area.
 * @throws PriceStoreError `PRICE_CORRUPT_VALUE` naming an entry that does not decode
 */
export async function replayLog(log: BytesSublevel, provider: Provider): Promise<ReplayedLog> {
  const writes: OpenWrite[] = []
  let nextSequence = 0
  let horizon = 0
  for await (const [key, entry] of log.iterator({ highWaterMarkBytes: REPLAY_READ_BYTES } as object)) {
    let write: OpenWrite
    try {
      const { period, sequence } = readLogKey(key)
      write = openWrite(period, sequence, asBuffer(key), asBuffer(entry), provider)
      nextSequence = Math.max(nextSequence, sequence + 1)
    } catch (err) {
      const name = key.length === 12 ? describeLog(readLogKey(key).period, readLogKey(key).sequence) : `log entry 0x${Buffer.from(key).toString('hex')}`
      throw undecodable(name, err)
    }
    writes.push(write)
    for (const rows of write.rows.values()) for (const row of rows) horizon = Math.max(horizon, row.timestamp)
  }
  // One new area for the whole log: entries are taken in key order, which within an hour is commit order.
  return { area: OpenArea.EMPTY.withWrites(writes), nextSequence, horizon }
}
