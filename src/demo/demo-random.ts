/**
 * The demo's pseudo-random numbers: a seeded generator, the same on every
 * platform, so a seed always gives the same demo records (no `Math.random`).
 */

/** A seeded source of numbers. */
export interface Random {
  /** A float in [0, 1). */
  next(): number
  /** A standard normal deviate. */
  normal(): number
  /** Fills the first `length` bytes of `bytes`. */
  fill(bytes: Uint8Array, length: number): void
}

/**
 * sfc32 (Chris Doty-Humphrey's Small Fast Counter, 128-bit state), seeded
 * from the string through cyrb128: fast, well distributed, and the same on
 * every platform, which is all a demo needs (not for cryptography).
 */
export function createRandom(seed: string): Random {
  let [a, b, c, d] = cyrb128(seed)
  const nextUint32 = (): number => {
    a |= 0
    b |= 0
    c |= 0
    d |= 0
    const t = (((a + b) | 0) + d) | 0
    d = (d + 1) | 0
    a = b ^ (b >>> 9)
    b = (c + (c << 3)) | 0
    c = (c << 21) | (c >>> 11)
    c = (c + t) | 0
    return t >>> 0
  }
  for (let i = 0; i < 15; i++) nextUint32() // mix the seed in before use
  const next = (): number => nextUint32() / 4_294_967_296
  return {
    next,
    normal() {
      // Box-Muller; 1 - u keeps the logarithm away from 0.
      const u = 1 - next()
      const v = next()
      return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v)
    },
    fill(bytes, length) {
      for (let i = 0; i < length; i += 4) {
        const word = nextUint32()
        bytes[i] = word & 0xff
        if (i + 1 < length) bytes[i + 1] = (word >>> 8) & 0xff
        if (i + 2 < length) bytes[i + 2] = (word >>> 16) & 0xff
        if (i + 3 < length) bytes[i + 3] = word >>> 24
      }
    },
  }
}

function cyrb128(text: string): [number, number, number, number] {
  let h1 = 1779033703
  let h2 = 3144134277
  let h3 = 1013904242
  let h4 = 2773480762
  for (let i = 0; i < text.length; i++) {
    const k = text.charCodeAt(i)
    h1 = h2 ^ Math.imul(h1 ^ k, 597399067)
    h2 = h3 ^ Math.imul(h2 ^ k, 2869860233)
    h3 = h4 ^ Math.imul(h3 ^ k, 951274213)
    h4 = h1 ^ Math.imul(h4 ^ k, 2716044597)
  }
  h1 = Math.imul(h3 ^ (h1 >>> 18), 597399067)
  h2 = Math.imul(h4 ^ (h2 >>> 22), 2869860233)
  h3 = Math.imul(h1 ^ (h3 >>> 17), 951274213)
  h4 = Math.imul(h2 ^ (h4 >>> 19), 2716044597)
  h1 ^= h2 ^ h3 ^ h4
  h2 ^= h1
  h3 ^= h1
  h4 ^= h1
  return [h1 >>> 0, h2 >>> 0, h3 >>> 0, h4 >>> 0]
}
