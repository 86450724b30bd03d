import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { runCli } from '../../src/cli/run-cli.js'
import { type MemoryIo, eachTempDb, memoryIo, ndjson, record, storedIds } from './helpers.js'

let dir: string
let db: string
eachTempDb((newDir, newDb) => {
  dir = newDir
  db = newDb
})

/**
 * A standard input that gives `lines` and then stays open, as a pipe from a
 * slow producer does; `drained` resolves once the reader asked for more
 * than there is.
 */
function openStdin(lines: readonly string[]): { stdin: Readable; drained: Promise<void> } {
  let next = 0
  let drained!: () => void
  const done = new Promise<void>((resolve) => (drained = resolve))
  const stdin = new Readable({
    read() {
      if (next < lines.length) this.push(`${lines[next++]}\n`)
      else drained()
    },
  })
  return { stdin, drained: done }
}

/**
 * Resolves once the import has written its first batch of 10 (the status
 * line's first drawing) and read all there is: the rest of the records
 * wait in the next batch, and the import waits for input.
 */
async function idleAfterFirstBatch(memory: MemoryIo, drained: Promise<void>): Promise<void> {
  await Promise.all([drained, memory.waitForStderr(/importing: 10 records/)])
  // The lines already read reach the batch within a few ticks; no I/O is left to wait for.
  await new Promise((resolve) => setTimeout(resolve, 50))
}

const RESUME = 'To finish, run the same import again: records already stored are replaced, not duplicated.'

describe('price-store import: Ctrl+C', () => {
  it('keeps the batches written, drops the one being collected, says so, erases the status line, exit 130', async () => {
    const { stdin, drained } = openStdin(ndjson(Array.from({ length: 15 }, (_, i) => record('BTC', i))))
    const memory = memoryIo({ stdin, isTTY: true })
    const exit = runCli(['import', '--db', db, '--batch-size', '10', '-'], memory.io)
    await idleAfterFirstBatch(memory, drained)
    memory.signal('SIGINT')
    expect(await exit).toBe(130)
    expect(memory.stdout()).toBe('')
    const stderr = memory.stderr()
    const report = stderr.slice(stderr.indexOf('price-store import: interrupted'))
    expect(stderr.slice(0, -report.length).endsWith('\r\x1b[2K')).toBe(true) // the status line was erased first
    expect(report).toBe(
      `price-store import: interrupted by SIGINT: 10 records stored in ${db}, up to <stdin> line 10. ` +
        `The 5 records read after them (<stdin> lines 11-15) were not written.\n${RESUME}\n`,
    )
    expect(Object.values(await storedIds(db)).flat()).toHaveLength(10)
    expect(stdin.destroyed).toBe(true)
  })

  it('a signal while waiting for input stops at once: nothing read, nothing stored', async () => {
    const { stdin, drained } = openStdin([])
    const memory = memoryIo({ stdin })
    const exit = runCli(['import', '--db', db, '-'], memory.io)
    await drained
    memory.signal('SIGINT')
    expect(await exit).toBe(130)
    expect(memory.stderr()).toBe(`price-store import: interrupted by SIGINT: 0 records stored in ${db}.\n${RESUME}\n`)
    expect(stdin.destroyed).toBe(true)
  })

  it('in a file: names the first line not stored, with the tail command for NDJSON; SIGTERM exits 143', async () => {
    const file = join(dir, 'first.ndjson')
    await writeFile(file, `${ndjson(Array.from({ length: 15 }, (_, i) => record('ETH', i))).join('\n')}\n`)
    const { stdin, drained } = openStdin([])
    const memory = memoryIo({ stdin, isTTY: true })
    // Standard input is read only once the file is: waiting on it, the import holds the file's lines 11-15.
    const exit = runCli(['import', '--db', db, '--batch-size', '10', file, '-'], memory.io)
    await idleAfterFirstBatch(memory, drained)
    memory.signal('SIGTERM')
    expect(await exit).toBe(143)
    expect(memory.stderr()).toContain(
      `price-store import: interrupted by SIGTERM: 10 records stored in ${db}, up to ${file} line 10. ` +
        `The 5 records read after them (${file} lines 11-15) were not written.\n` +
        `${RESUME} For NDJSON, "tail -n +11 ${file}" gives the lines from the first one not stored.\n`,
    )
    expect(Object.values(await storedIds(db)).flat()).toHaveLength(10)
  })
})
