/**
 * The real records RedStone's API served (fixtures/redstone-api-lite-records.json):
 * each with a `liteEvmSignature` and no Arweave `signature`. Expectations are
 * built from the fixture's own fields, never by the code under test.
 */
import { readFileSync } from 'node:fs'
import type { Provider } from '../../../src/types.js'

interface Fixture {
  readonly provider: { readonly id: string; readonly publicKey: string; readonly evmAddress: string }
  readonly captures: readonly { readonly records: readonly Record<string, unknown>[] }[]
}

const fixture = JSON.parse(readFileSync(new URL('../fixtures/redstone-api-lite-records.json', import.meta.url), 'utf8')) as Fixture

/** The five records, as served (with `minutes` and `providerPublicKey`). */
export const LITE_RECORDS: readonly Readonly<Record<string, unknown>>[] = fixture.captures.flatMap((capture) => capture.records)

/** RedStone's provider as the fixture names it. */
export const LITE_PROVIDER: Provider = Object.freeze({ name: 'redstone', id: fixture.provider.id, publicKey: fixture.provider.publicKey })

/** RedStone's lite signer (redstone-api's provider table, and the README's `--evm-signer`). */
export const LITE_SIGNER = fixture.provider.evmAddress

/**
 * What a query other than the range form returns for a served record: the same fields, less `minutes`
 * (recomputed, and only by the range form), with `providerPublicKey` the provider's key.
 */
export function asLatestReturns(record: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const { minutes: _minutes, ...rest } = record
  return { ...rest, providerPublicKey: fixture.provider.publicKey }
}

/** A copy of `record` with its value changed after signing (the lite signature covers `value`). */
export function tampered(record: Readonly<Record<string, unknown>>): Record<string, unknown> {
  return { ...record, value: (record['value'] as number) + 1 }
}

/** `record` without any signature kind. */
export function unsigned(record: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const { signature: _a, liteEvmSignature: _b, evmSignature: _c, ...rest } = record
  return rest
}
