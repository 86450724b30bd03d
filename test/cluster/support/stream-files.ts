/**
 * A JetStream stream's message files on disk, for the one fault nats-server cannot be asked to make:
 * coming back from a crash without the messages it acknowledged last (what nats-server 2.9.10 does
 * when every server of a cluster stops at once: it has no `sync_interval`, so what the kernel had
 * not written is gone). With the server stopped, {@link blockSizes} notes how long each message
 * block is; after more messages were written and the server was stopped again,
 * {@link cutBlocksTo} cuts the blocks back to those lengths and removes the block indexes, so the
 * server rebuilds them from the messages that are left: it starts with exactly the stream it had
 * then, and gives the lost messages' sequences to the next ones.
 *
 * Layout (nats-server 2.9): `<store_dir>/jetstream/$G/streams/<stream>/msgs/<n>.blk`, with `<n>.idx`
 * and `<n>.fss` beside each block.
 */
import { readdir, rm, stat, truncate } from 'node:fs/promises'
import { join } from 'node:path'

/** Where a server of the test harness keeps the stream's messages (`storeDir` is its `jetstream.store_dir`). */
export function messagesDir(storeDir: string, stream: string): string {
  return join(storeDir, 'jetstream', '$G', 'streams', stream, 'msgs')
}

/** Each message block's length in bytes, by file name. Read with the server stopped (it has written everything then). */
export async function blockSizes(dir: string): Promise<Map<string, number>> {
  const sizes = new Map<string, number>()
  for (const name of await readdir(dir)) if (name.endsWith('.blk')) sizes.set(name, (await stat(join(dir, name))).size)
  if (sizes.size === 0) throw new Error(`no message block in ${dir}`)
  return sizes
}

/**
 * Cuts the stream's messages back to what `sizes` noted (blocks written since are removed) and removes every
 * block index, with the server stopped; it rebuilds them when it starts.
 */
export async function cutBlocksTo(dir: string, sizes: ReadonlyMap<string, number>): Promise<void> {
  for (const name of await readdir(dir)) {
    const path = join(dir, name)
    if (name.endsWith('.idx') || name.endsWith('.fss')) await rm(path)
    else if (name.endsWith('.blk')) {
      const size = sizes.get(name)
      if (size === undefined) await rm(path)
      else await truncate(path, size)
    }
  }
}
