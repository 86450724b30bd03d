import { createHash } from 'node:crypto'
import type { NewPriceRecord, Provider } from '../types.js'

/**
 * The provider the generated records are written for: open the store under
 * test with it. The key is long on purpose: it is joined into every answer.
 */
export const TEST_PROVIDER: Provider = Object.freeze({
  name: 'redstone',
  id: 'I-5rWUehEv-MjdK9gFw09RxfSLQX9DIHxG614Wf8qo0',
  publicKey: Buffer.from(Array.from({ length: 392 }, (_, i) => (i * 37 + 11) & 0xff)).toString('base64'),
})

/** A record as a writer hands it to `put`/`putMany` (before validation), writable so tests can spoil a field. */
export type InputRecord = { -readonly [K in keyof NewPriceRecord]: NewPriceRecord[K] } & { source: Record<string, unknown> }

/** The hour that starts at this timestamp is a multiple of 3 600 000, so bucket edges fall on round numbers. */
export const T0 = 1_699_999_200_000

// A uuid-shaped id derived from the key, so the same call always gives the same record.
function deriveId(symbol: string, timestamp: number): string {
  const hex = createHash('sha256').update(`${symbol}\u0000${timestamp}`).digest('hex')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`
}

/**
 * A valid, deterministic record: the defaults depend only on `symbol` and
 * `timestamp`, so equal overrides give equal records.
 */
export function makeRecord(overrides: Partial<InputRecord> = {}): InputRecord {
  const symbol = overrides.symbol ?? 'BTC'
  const timestamp = overrides.timestamp ?? T0
  const id = overrides.id ?? deriveId(symbol, timestamp)
  const sig = createHash('sha256').update(`sig:${id}`).digest('base64')
  return {
    id,
    symbol,
    provider: TEST_PROVIDER.id,
    value: 30_000 + (timestamp % 100_000) / 100,
    signature: sig.repeat(8),
    permawebTx: createHash('sha256').update(`tx:${id}`).digest('base64url'),
    version: '0.4',
    source: { binance: 30_001.5, coinbase: 29_999.25 },
    timestamp,
    ...overrides,
  }
}
