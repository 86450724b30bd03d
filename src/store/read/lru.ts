/**
 * A least-recently-used map bounded by the total weight of its values (e.g.
 * their bytes). A value heavier than the whole capacity is not kept.
 */
export class Lru<K, V> {
  readonly capacity: number
  readonly #weigh: (value: V) => number
  readonly #entries = new Map<K, { value: V; weight: number }>()
  #weight = 0

  constructor(capacity: number, weigh: (value: V) => number) {
    this.capacity = capacity
    this.#weigh = weigh
  }

  /** Total weight held. */
  get weight(): number {
    return this.#weight
  }

  get size(): number {
    return this.#entries.size
  }

  /** The value, marked as just used; `undefined` when absent. */
  get(key: K): V | undefined {
    const entry = this.#entries.get(key)
    if (entry === undefined) return undefined
    this.#entries.delete(key)
    this.#entries.set(key, entry)
    return entry.value
  }

  has(key: K): boolean {
    return this.#entries.has(key)
  }

  set(key: K, value: V): void {
    this.delete(key)
    const weight = this.#weigh(value)
    if (weight > this.capacity) return
    this.#entries.set(key, { value, weight })
    this.#weight += weight
    for (const [oldest, entry] of this.#entries) {
      if (this.#weight <= this.capacity) break
      this.#entries.delete(oldest)
      this.#weight -= entry.weight
    }
  }

  delete(key: K): void {
    const entry = this.#entries.get(key)
    if (entry === undefined) return
    this.#entries.delete(key)
    this.#weight -= entry.weight
  }

  clear(): void {
    this.#entries.clear()
    this.#weight = 0
  }
}
