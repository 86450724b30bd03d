/**
 * The damage checks the format-3 codec tests share (heads, log entries,
 * chunk parts): damaged bytes are MalformedBytes, never another error.
 */
import fc from 'fast-check'
import { expect } from 'vitest'
import { MalformedBytes } from '../../src/keys/bytes.js'

/** Version bytes other than the value version of log entries and chunk parts (3; heads entries also read 4). */
export const OTHER_VERSIONS: readonly number[] = [0, 1, 2, 4, 0xff]

/** `run` must throw MalformedBytes; `context` names the damage in a failure. */
export function expectMalformed(run: () => unknown, context: string): void {
  let caught: unknown
  try {
    run()
  } catch (err) {
    caught = err
  }
  expect(caught, `${context}: expected MalformedBytes`).toBeInstanceOf(MalformedBytes)
}

/** A copy of `bytes` with `version` as its first (version) byte. */
export function withVersion(bytes: Buffer, version: number): Buffer {
  const damaged = Buffer.from(bytes)
  damaged[0] = version
  return damaged
}

/** `read` of every proper prefix of `bytes`, the empty one included, is MalformedBytes. */
export function expectEveryCutMalformed(bytes: Buffer, read: (bytes: Buffer) => unknown): void {
  for (let cut = 0; cut < bytes.length; cut++) expectMalformed(() => read(bytes.subarray(0, cut)), `cut at ${cut}`)
}

/** Property: `read` of any bytes `damaged` draws returns or throws MalformedBytes, never another error. */
export function expectOnlyMalformed(damaged: fc.Arbitrary<Buffer>, read: (bytes: Buffer) => unknown, numRuns: number): void {
  fc.assert(
    fc.property(damaged, (bytes) => {
      try {
        read(bytes)
      } catch (err) {
        expect(err).toBeInstanceOf(MalformedBytes)
      }
    }),
    { numRuns },
  )
}
