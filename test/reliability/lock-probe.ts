/**
 * Child process of locking.test.ts: opens a store on a directory.
 *
 *   node lock-probe.cjs try <dir>    open; print `OPENED <records of BTC>` and close, or print
 *                                    `ERROR <code> <codes in the cause chain, comma-separated>`
 *   node lock-probe.cjs hold <dir>   open, print `OPENED <records of BTC>`, then obey stdin lines:
 *                                    `write <timestamp>` (prints `WROTE <timestamp>`), `close` (prints `CLOSED`, exits)
 */
import { createInterface } from 'node:readline'
import { PriceStore, isPriceStoreError } from '../../src/index.js'
import { LOCK_PROVIDER, lockRecord } from './lock-plan.js'

function chainCodes(err: unknown): string[] {
  const codes: string[] = []
  for (let current = err, depth = 0; typeof current === 'object' && current !== null && depth < 8; depth++) {
    const code = (current as { code?: unknown }).code
    if (typeof code === 'string') codes.push(code)
    current = (current as { cause?: unknown }).cause
  }
  return codes
}

async function main(): Promise<void> {
  const [mode, dir] = process.argv.slice(2)
  if ((mode !== 'try' && mode !== 'hold') || dir === undefined) throw new Error('usage: lock-probe try|hold <dir>')
  let store: PriceStore
  try {
    store = await PriceStore.open(dir, { provider: LOCK_PROVIDER })
  } catch (err) {
    const code = isPriceStoreError(err) ? err.code : 'UNCODED'
    process.stdout.write(`ERROR ${code} ${chainCodes(err).slice(1).join(',') || '-'}\n`)
    return
  }
  process.stdout.write(`OPENED ${(await store.latest('BTC', { limit: 3000 })).length}\n`)
  if (mode === 'try') {
    await store.close()
    process.stdout.write('CLOSED\n')
    return
  }
  for await (const line of createInterface({ input: process.stdin })) {
    const [command, argument] = line.split(' ')
    if (command === 'write') {
      await store.put(lockRecord(Number(argument)))
      process.stdout.write(`WROTE ${argument}\n`)
    } else if (command === 'close') {
      break
    }
  }
  await store.close()
  process.stdout.write('CLOSED\n')
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`lock-probe failed: ${err instanceof Error ? err.stack : String(err)}\n`)
    process.exit(3)
  },
)
