/** The provider and records of locking.test.ts, shared with its child process. */
import type { NewPriceRecord } from '../../src/index.js'

export const LOCK_PROVIDER = Object.freeze({ name: 'redstone', id: 'lock-provider-id', publicKey: 'lock-provider-key' })

export const LOCK_T0 = 1_700_000_000_000

/** A valid BTC record at `timestamp`, whose contents depend only on it. */
export function lockRecord(timestamp: number): NewPriceRecord {
  return {
    id: `id-${timestamp}`,
    symbol: 'BTC',
    provider: LOCK_PROVIDER.id,
    value: 30_000 + (timestamp % 1000) / 4,
    signature: `sig-${timestamp}`,
    permawebTx: `tx-${timestamp}`,
    version: '0.4',
    source: { binance: timestamp % 97 },
    timestamp,
  }
}
