import { open, rename, rm, type FileHandle } from 'node:fs/promises'
import type { Writable } from 'node:stream'
import { CliError } from './args.js'

/** Where a command's output goes: written in order, then committed or thrown away. */
export interface Output {
  /** Writes text or bytes, waiting while the destination is full. */
  write(text: string | Uint8Array): Promise<void>
  /** Makes the output complete: for a file, flushes it and gives it its name. */
  commit(): Promise<void>
  /** Gives up: for a file, removes what was written, so no partial file remains. */
  discard(): Promise<void>
}

/**
 * A file written under a temporary name beside it (`FILE.partial`) and
 * renamed to `FILE` only once complete and flushed, so a killed or stopped
 * command never leaves a `FILE` that looks complete (an earlier `FILE` stays
 * as it was until then). A `FILE.partial` left by a killed command is
 * replaced by the next one.
 */
export async function fileOutput(path: string): Promise<Output> {
  const partial = `${path}.partial`
  let handle: FileHandle
  try {
    handle = await open(partial, 'w')
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err)
    throw new CliError(`cannot write ${path}: ${reason}`, (err as { code?: string }).code === 'ENOENT' ? 2 : 1, { cause: err })
  }
  let closed = false
  const close = async (): Promise<void> => {
    if (!closed) await handle.close()
    closed = true
  }
  return {
    async write(text) {
      if (typeof text === 'string') {
        await handle.write(text)
        return
      }
      // A write may take part of a large buffer (a Parquet row group): the rest follows.
      for (let at = 0; at < text.length;) at += (await handle.write(text, at, text.length - at)).bytesWritten
    },
    async commit() {
      await handle.sync()
      await close()
      await rename(partial, path)
    },
    async discard() {
      await close().catch(() => {})
      await rm(partial, { force: true })
    },
  }
}

/** Standard output (or any stream), waiting for it to drain; a write error (a closed pipe) rejects the next write. */
export function streamOutput(stream: Writable): Output & { dispose(): void } {
  let failure: Error | undefined
  const onError = (err: Error): void => {
    failure = err
  }
  stream.on('error', onError)
  return {
    async write(text) {
      if (failure !== undefined) throw new CliError(`cannot write to standard output: ${failure.message}`, 1, { cause: failure })
      if (!stream.write(text)) {
        await new Promise<void>((resolve) => {
          const done = (): void => {
            stream.off('drain', done)
            stream.off('error', done)
            resolve()
          }
          stream.on('drain', done)
          stream.on('error', done)
        })
      }
    },
    async commit() {},
    async discard() {},
    dispose() {
      stream.off('error', onError)
    },
  }
}
