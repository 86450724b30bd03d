/** `price-store query` with `validUntil` (docs/cli.md): passed through as any parameter, and to a `--times-file` batch. */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { batchOptionsFromCli } from '../../src/cli/batch-query.js'
import { UsageError } from '../../src/cli/args.js'

let dir = ''
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'price-store-vu-cli-'))
  await writeFile(join(dir, 'times.txt'), '1717200000000\n')
})
afterAll(async () => {
  await rm(dir, { recursive: true, force: true })
})

describe('--times-file with validUntil', () => {
  it('passes validUntil=true or false to the batch, and refuses another value', async () => {
    const file = join(dir, 'times.txt')
    expect(await batchOptionsFromCli(new URLSearchParams('symbols=BTC&validUntil=true'), file)).toEqual({ symbols: ['BTC'], times: [1717200000000], validUntil: true })
    expect(await batchOptionsFromCli(new URLSearchParams('symbols=BTC&validUntil=false'), file)).toEqual({ symbols: ['BTC'], times: [1717200000000], validUntil: false })
    expect(await batchOptionsFromCli(new URLSearchParams('symbols=BTC'), file)).toEqual({ symbols: ['BTC'], times: [1717200000000] })
    await expect(batchOptionsFromCli(new URLSearchParams('symbols=BTC&validUntil=yes'), file)).rejects.toBeInstanceOf(UsageError)
  })
})
