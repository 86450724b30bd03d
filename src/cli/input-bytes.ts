import type { FileHandle } from 'node:fs/promises'
import type { ReadStream } from 'node:fs'

/** How much of the import's input has been read, in bytes, when its size is known. */
export interface InputBytes {
  /** The fraction of all input bytes read so far; `undefined` when standard input (of unknown size) is among them. */
  readonly fractionDone: () => number | undefined
  /** Counts `stream`'s bytes from now on (one file after the other); returns it. */
  track(stream: ReadStream): ReadStream
}

/**
 * Sizes the inputs before the import starts, so progress can show percent
 * and time left. The bytes read run a little ahead of the records written
 * (the reader buffers up to 64 KiB), which is close enough for a percentage.
 */
export async function inputBytes(handles: readonly (FileHandle | undefined)[]): Promise<InputBytes> {
  let total: number | undefined = 0
  for (const handle of handles) {
    const stats = handle === undefined ? undefined : await handle.stat()
    total = total === undefined || stats === undefined || !stats.isFile() ? undefined : total + stats.size
  }
  let finished = 0
  let current: ReadStream | undefined
  return {
    fractionDone: () => (total === undefined || total === 0 ? undefined : (finished + (current?.bytesRead ?? 0)) / total),
    track(stream) {
      finished += current?.bytesRead ?? 0
      current = stream
      return stream
    },
  }
}
