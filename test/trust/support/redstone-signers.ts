/**
 * Signers that sign records the way RedStone's own code did, written apart
 * from src/trust so a shared mistake cannot hide:
 * - Arweave: the signed text is built by redstone-api's own compiled
 *   SignatureVerifier#getPriceSignedData (lodash.pick + deep-sort-object,
 *   node_modules/redstone-api/lib/signature-verifier.js), signed by
 *   arweave-js's own NodeCryptoDriver#sign (RSA-PSS SHA-256, Node's default
 *   salt: the longest) and base64-encoded as redstone-node's
 *   ArweaveProxy#sign did; the address by arweave-js `wallets.jwkToAddress`.
 * - EVM: redstone-node src/signers/EvmPriceSigner.ts (getLiteDataBytesString,
 *   personalSign, signTypedMessage V4 of PriceData) re-typed here over
 *   elliptic (not @noble/curves, which src/trust uses) with bn.js numbers.
 * Each throws where RedStone's would have (a value a uint256 cannot hold, a
 * symbol over 31 bytes).
 */
import { generateKeyPairSync } from 'node:crypto'
import { createRequire } from 'node:module'
import { keccak_256 } from '@noble/hashes/sha3'

const require = createRequire(import.meta.url)

interface Jwk { readonly kty: string; readonly n: string; readonly e: string }
interface CryptoDriver { sign(jwk: Jwk, data: Uint8Array, options?: { saltLength?: number }): Promise<Uint8Array> }
interface ArweaveClient { wallets: { jwkToAddress(jwk: Jwk): Promise<string> } }
const arweaveModule = require('arweave/node') as { default?: unknown }
const Arweave = (arweaveModule.default ?? arweaveModule) as { init(config: object): ArweaveClient; crypto: CryptoDriver }
const RedstoneVerifier = (require('redstone-api/lib/signature-verifier.js') as { default: new (proxy: unknown) => { getPriceSignedData(price: object): string } }).default
const redstoneVerifier = new RedstoneVerifier(undefined)
const EC = (require('elliptic') as { ec: new (curve: string) => EllipticCurve }).ec
const BN = require('bn.js') as new (value: number | string, base?: number) => { toString(base: number, length?: number): string }

interface EllipticKey {
  getPublic(compact: boolean, encoding: 'hex'): string
  sign(message: number[], options: { canonical: boolean }): { r: { toString(base: number, length: number): string }; s: { toString(base: number, length: number): string }; recoveryParam: number }
}
interface EllipticCurve { keyFromPrivate(hex: string, encoding: 'hex'): EllipticKey }
const secp256k1 = new EC('secp256k1')

/** An Arweave wallet: a 4096-bit RSA key as a JWK, its public key (`n`) and address. */
export interface ArweaveWallet {
  readonly jwk: Jwk
  readonly publicKey: string
  readonly address: string
}

/** A new 4096-bit Arweave wallet (slow: about a second; make one per test file). */
export async function newArweaveWallet(): Promise<ArweaveWallet> {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 4096, publicExponent: 0x10001 })
  const jwk = privateKey.export({ format: 'jwk' }) as unknown as Jwk
  const address = await Arweave.init({}).wallets.jwkToAddress(jwk)
  return { jwk, publicKey: jwk.n, address }
}

/** The text RedStone's own verifier rebuilt from a record for its Arweave signature (redstone-api getPriceSignedData). */
export function redstoneSignedText(record: object): string {
  return redstoneVerifier.getPriceSignedData(record)
}

/** The record's Arweave `signature`, as a RedStone node wrote it (saltLength: arweave-js's WebCrypto driver used 32). */
export async function arweaveSign(record: object, wallet: ArweaveWallet, saltLength?: number): Promise<string> {
  const text = redstoneSignedText(record)
  const signature = await Arweave.crypto.sign(wallet.jwk, new TextEncoder().encode(text), saltLength === undefined ? {} : { saltLength })
  return Buffer.from(signature).toString('base64')
}

/** An EVM key pair: the private key (hex) and its address (`0x` + lower-case hex). */
export interface EvmWallet {
  readonly privateKey: string
  readonly address: string
}

/** The EVM wallet of a private key (32 bytes hex, e.g. from a fixed seed). */
export function evmWallet(privateKey: string): EvmWallet {
  const key = secp256k1.keyFromPrivate(privateKey, 'hex')
  const uncompressed = Buffer.from(key.getPublic(false, 'hex'), 'hex').subarray(1)
  return { privateKey, address: `0x${Buffer.from(keccak_256(uncompressed)).subarray(12).toString('hex')}` }
}

/** ethers.utils.formatBytes32String, or ethers.utils.id for longer strings (EvmPriceSigner.convertStringToBytes32String). */
function bytes32Hex(symbol: string): string {
  if (symbol.length > 31) {
    if (symbol.length === 66 && symbol.startsWith('0x')) return symbol.slice(2)
    return Buffer.from(keccak_256(new TextEncoder().encode(symbol))).toString('hex')
  }
  const bytes = Buffer.from(symbol, 'utf8')
  if (bytes.length > 31) throw new Error('bytes32 string must be less than 32 bytes')
  return bytes.toString('hex').padEnd(64, '0')
}

const serializePriceValue = (value: number): number => Math.round(value * 10 ** 8)

function hexOf(value: number): string {
  // Number#toString(16) on what RedStone passed: a negative or non-finite value makes a string
  // ethereumjs-util's toBuffer refuses (RedStone threw).
  const hex = value.toString(16)
  if (!/^[0-9a-f]+$/.test(hex)) throw new Error(`Cannot convert string to buffer: ${hex}`)
  return hex
}

function signDigest(digest: Uint8Array, wallet: EvmWallet): string {
  const signature = secp256k1.keyFromPrivate(wallet.privateKey, 'hex').sign([...digest], { canonical: true })
  return `0x${signature.r.toString(16, 64)}${signature.s.toString(16, 64)}${(27 + signature.recoveryParam).toString(16)}`
}

/** The record's `liteEvmSignature` (EvmPriceSigner#calculateLiteEvmSignature of a one-price package). */
export function liteEvmSign(record: { symbol: string; value: number; timestamp: number }, wallet: EvmWallet): string {
  let data = bytes32Hex(record.symbol) + hexOf(serializePriceValue(record.value)).padStart(64, '0')
  data += hexOf(Math.ceil(record.timestamp / 1000)).padStart(64, '0')
  if (data.length % 2 === 1) data = `0${data}` // ethereumjs-util padToEven
  const hash = keccak_256(Buffer.from(data, 'hex'))
  const prefixed = Buffer.concat([Buffer.from('\x19Ethereum Signed Message:\n32'), hash])
  return signDigest(keccak_256(prefixed), wallet)
}

const word = (value: number | string, base = 10): Buffer => Buffer.from(new BN(value, base).toString(16, 64), 'hex')
const keccakText = (text: string): Buffer => Buffer.from(keccak_256(Buffer.from(text, 'utf8')))

/** The record's `evmSignature` (EvmPriceSigner#calculateEvmSignature: signTypedMessage V4, domain Redstone/<version>/<chainId>). */
export function typedEvmSign(record: { symbol: string; value: number; timestamp: number; version: string }, wallet: EvmWallet, chainId = 1): string {
  const value = serializePriceValue(record.value)
  if (!(value >= 0)) throw new Error('uint256 cannot be negative')
  if (value > Number.MAX_SAFE_INTEGER) throw new Error('Assertion failed') // bn.js on a number past 2^53
  const domainType = keccakText('EIP712Domain(string name,string version,uint256 chainId)')
  const domain = keccak_256(Buffer.concat([domainType, keccakText('Redstone'), keccakText(record.version), word(chainId)]))
  const priceType = keccakText('PriceData(bytes32[] symbols,uint256[] values,uint256 timestamp)')
  const symbols = keccak_256(Buffer.from(bytes32Hex(record.symbol), 'hex'))
  const values = keccak_256(word(value))
  const struct = keccak_256(Buffer.concat([priceType, symbols, values, word(record.timestamp)]))
  return signDigest(keccak_256(Buffer.concat([Buffer.from([0x19, 0x01]), domain, struct])), wallet)
}
