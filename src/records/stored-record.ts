/**
 * A record as the store keeps it: validated, with the fields that are joined
 * on read (`provider`, `providerPublicKey`) and the derived `minutes` removed.
 */
export interface StoredRecord {
  readonly id: string
  readonly symbol: string
  readonly timestamp: number
  readonly value: number
  /** The Arweave signature, or `ABSENT_SIGNATURE` (empty) when the record carries none (signature-presence.ts). */
  readonly signature: string
  readonly permawebTx: string
  readonly version: string
  readonly source: Readonly<Record<string, unknown>>
  /** Fields beyond the known ones, in the writer's order; `null` when there are none. */
  readonly extras: Readonly<Record<string, unknown>> | null
  /**
   * Set by validation: `true` when no string or key of the record's body (signature, permawebTx, version, source,
   * extras) is a lone surrogate, no number is -0 and no key is `__proto__`, so a writer may pack it without checking
   * again. Absent means not known.
   */
  readonly plainJson?: boolean
}
