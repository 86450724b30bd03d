/**
 * Random data packages for RedStone's code to sign: feed ids short, long
 * (hashed), unicode (some over the 31 bytes a bytes32 holds), hex; numeric
 * values small, large, huge, with and without `decimals`/`valueByteSize`;
 * bytes values; timestamps over the 6 bytes' range; now and then a feed id
 * twice or a negative value, which RedStone refuses.
 */
import fc from 'fast-check'

const CURVE_ORDER = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n

/** A secp256k1 private key, `0x` + 64 hex. */
export const privateKeyArb = fc.bigInt({ min: 1n, max: CURVE_ORDER - 1n }).map((k) => `0x${k.toString(16).padStart(64, '0')}`)

export const feedIdArb = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom('ETH', 'BTC', 'AAVE', 'USDC', 'ACRED_FUNDAMENTAL', 'ETH/USD', 'wstETH_FUNDAMENTAL') },
  { weight: 4, arbitrary: fc.string({ minLength: 1, maxLength: 31 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 20 }) },
  { weight: 1, arbitrary: fc.string({ minLength: 32, maxLength: 60 }) },
  { weight: 1, arbitrary: fc.uint8Array({ minLength: 16, maxLength: 32 }).map((b) => `0x${Buffer.from(b).toString('hex')}`) },
)

const numberArb = fc.oneof(
  fc.double({ min: 0, max: 1e6, noNaN: true }),
  fc.double({ min: 0, max: 1e30, noNaN: true }),
  fc.integer({ min: 0, max: 2 ** 40 }),
  fc.constantFrom(0, 252.985, 1026.554556, 0.1 + 0.2, 1e21, 1.5e21, 9.99e-9, 5e-9, 123456789.123456789),
  { arbitrary: fc.double({ min: -1e6, max: -1e-12, noNaN: true }), weight: 1 },
)

export type PointSpec =
  | { kind: 'numeric'; dataFeedId: string; value: number; decimals?: number; valueByteSize?: number }
  | { kind: 'bytes'; dataFeedId: string; bytes: Uint8Array }

const numericPackage = fc.record({
  decimals: fc.option(fc.integer({ min: 0, max: 18 }), { nil: undefined, freq: 3 }),
  valueByteSize: fc.option(fc.integer({ min: 1, max: 32 }), { nil: undefined, freq: 2 }),
  points: fc.array(fc.record({ dataFeedId: feedIdArb, value: numberArb }), { minLength: 1, maxLength: 4 }),
}).map(({ decimals, valueByteSize, points }): PointSpec[] =>
  points.map((p) => ({ kind: 'numeric', ...p, ...(decimals === undefined ? {} : { decimals }), ...(valueByteSize === undefined ? {} : { valueByteSize }) })),
)

const bytesPackage = fc.integer({ min: 1, max: 48 }).chain((size) =>
  fc.array(fc.record({ dataFeedId: feedIdArb, bytes: fc.uint8Array({ minLength: size, maxLength: size }) }), { minLength: 1, maxLength: 3 })
    .map((points): PointSpec[] => points.map((p) => ({ kind: 'bytes', ...p }))),
)

export const packageArb = fc.record({
  points: fc.oneof({ weight: 4, arbitrary: numericPackage }, { weight: 1, arbitrary: bytesPackage }),
  timestamp: fc.oneof(fc.integer({ min: 1_600_000_000_000, max: 1_900_000_000_000 }), fc.integer({ min: 0, max: 2 ** 48 - 1 })),
})

/** A package drawn by packageArb. */
export type PackageSpec = { readonly points: PointSpec[]; readonly timestamp: number }
