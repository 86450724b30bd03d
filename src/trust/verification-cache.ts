/**
 * A bounded memory of cryptographic outcomes, so each distinct signature is
 * verified once: keyed by the signature and the digest of what it signs (so
 * a tampered record, whose digest differs, never reuses an outcome), it
 * holds what the cryptography alone said: the recovered EVM address, or
 * whether an RSA signature holds under a key. Whether that signer is
 * allowed is decided afresh each time, from the verifier's signers.
 * Eviction is first-in first-out: a store sees a signature in one ingest and
 * in re-checks of the same range, so recency buys little over insertion order.
 * Each worker of a SignatureVerifier has one; what one computes it hands on
 * (takeLearned) and the others keep (remember), so a signature met again is
 * a hit on whichever worker meets it.
 */

/** What the cryptography said: an EVM address, `''` when none recovered; for RSA, true or false. */
export type CachedOutcome = string | boolean

/** The bounded cache; `size` 0 keeps nothing. */
export class VerificationCache {
  readonly #entries = new Map<string, CachedOutcome>()
  /**
   * The keys of {@link VerificationCache.#entries} in the order they were kept, as a ring: the next to go is at
   * `#oldest`. Not the Map's own order through `keys().next()`: that walks past every slot a deletion left, and a
   * full cache of 100,000 spent 30–150 µs a verification evicting.
   */
  readonly #order: string[] = []
  #oldest = 0
  /** Outcomes computed here since {@link VerificationCache.takeLearned}, for the other workers' caches. */
  #learned: [string, CachedOutcome][] = []
  #hits = 0
  #misses = 0

  constructor(readonly capacity: number) {}

  /** The outcome kept for `key`, or undefined (counted as a miss). */
  get(key: string): CachedOutcome | undefined {
    const outcome = this.#entries.get(key)
    if (outcome === undefined) this.#misses++
    else this.#hits++
    return outcome
  }

  /** Keeps an outcome computed here (and notes it for {@link VerificationCache.takeLearned}). */
  set(key: string, outcome: CachedOutcome): void {
    if (this.capacity <= 0) return
    this.#keep(key, outcome)
    // Bounded like the cache itself, for a holder that never takes them (a worker takes them after every chunk).
    if (this.#learned.length < this.capacity) this.#learned.push([key, outcome])
  }

  /** The outcomes {@link VerificationCache.set} kept since the last call, as JSON (`''` for none). */
  takeLearned(): string {
    if (this.#learned.length === 0) return ''
    const learned = JSON.stringify(this.#learned)
    this.#learned = []
    return learned
  }

  /** Keeps outcomes another cache learned ({@link VerificationCache.takeLearned}'s text), without counting them. */
  remember(learned: string): void {
    if (this.capacity <= 0 || learned === '') return
    for (const [key, outcome] of JSON.parse(learned) as [string, CachedOutcome][]) this.#keep(key, outcome)
  }

  #keep(key: string, outcome: CachedOutcome): void {
    if (this.#entries.has(key)) {
      this.#entries.set(key, outcome)
      return
    }
    if (this.#order.length < this.capacity) this.#order.push(key)
    else {
      this.#entries.delete(this.#order[this.#oldest] as string)
      this.#order[this.#oldest] = key
      this.#oldest = (this.#oldest + 1) % this.capacity
    }
    this.#entries.set(key, outcome)
  }

  /** Hits and misses so far, and the entries kept. */
  stats(): { readonly hits: number; readonly misses: number; readonly size: number } {
    return { hits: this.#hits, misses: this.#misses, size: this.#entries.size }
  }
}
