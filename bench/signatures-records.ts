/**
 * Signed records for signatures.bench.ts: distinct records of one symbol
 * series, each signed with one kind as RedStone signs it (the messages are
 * rebuilt by src/trust's own builders, which test/trust checks against
 * RedStone's code; the signing keys are fixed, the RSA one generated).
 */
import { constants, createPrivateKey, generateKeyPairSync, sign, type KeyObject } from 'node:crypto'
import { secp256k1 } from '@noble/curves/secp256k1'
import type { AllowedSigners } from '../src/trust/allowed-signers.js'
import { arweaveAddressOf } from '../src/trust/arweave-key.js'
import { arweaveSignedText } from '../src/trust/arweave-message.js'
import { liteDigest, typedDigest } from '../src/trust/evm-message.js'
import { recoverAddress, type Secp256k1Backend } from '../src/trust/secp256k1-recover.js'
import type { SignatureKind } from '../src/trust/verdict.js'

/** What one tight-loop worker gets. */
export interface LoopTask {
  readonly signers: AllowedSigners
  readonly records: string
  readonly backend: Secp256k1Backend
  readonly seconds: number
  readonly offset: number
}

const EVM_KEY = Uint8Array.from(Buffer.from('4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318', 'hex'))

/** The RSA-4096 key of the bench's provider, its public key (JWK n) and Arweave address. */
export interface BenchProvider {
  readonly privateKey: KeyObject
  readonly publicKey: string
  readonly id: string
  readonly evmAddress: string
}

export function benchProvider(): BenchProvider {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 4096, publicExponent: 0x10001 })
  const publicKey = (privateKey.export({ format: 'jwk' }) as { n: string }).n
  const probe = liteDigest({ symbol: 'X', value: 1, timestamp: 1000 })
  if (!('digest' in probe)) throw new Error('unreachable')
  const signature = secp256k1.sign(probe.digest, EVM_KEY)
  const evmAddress = recoverAddress(probe.digest, { compact: signature.toCompactRawBytes(), recovery: signature.recovery as 0 | 1 }, 'noble') ?? ''
  return { privateKey: createPrivateKey(privateKey.export({ format: 'pem', type: 'pkcs8' })), publicKey, id: arweaveAddressOf(publicKey), evmAddress }
}

export function benchSigners(provider: BenchProvider): AllowedSigners {
  return { providers: [{ id: provider.id, publicKey: provider.publicKey, evmAddresses: [provider.evmAddress] }] }
}

function evmSignature(digest: Uint8Array): string {
  const signature = secp256k1.sign(digest, EVM_KEY)
  return `0x${Buffer.from(signature.toCompactRawBytes()).toString('hex')}${(27 + signature.recovery).toString(16)}`
}

/** `count` distinct records from `first` on, each carrying only `kind`, signed by `provider`. */
export function signedRecords(provider: BenchProvider, kind: SignatureKind, count: number, first = 0): Record<string, unknown>[] {
  const records: Record<string, unknown>[] = []
  for (let i = first; i < first + count; i++) {
    const record: Record<string, unknown> = {
      id: `bench-${kind}-${i}`, symbol: 'ETH', provider: provider.id, value: 1800 + (i % 997) / 13, permawebTx: 'mock-permaweb-tx', version: '0.4',
      source: { binance: 1800.1, coinbasepro: 1800.2, kraken: 1799.9 }, timestamp: 1_685_099_220_000 + i * 1000,
    }
    if (kind === 'arweave') {
      const bytes = sign('sha256', Buffer.from(arweaveSignedText(record)), { key: provider.privateKey, padding: constants.RSA_PKCS1_PSS_PADDING })
      record['signature'] = bytes.toString('base64')
    } else {
      const digest = kind === 'lite-evm' ? liteDigest(record) : typedDigest(record, 1)
      if (!('digest' in digest)) throw new Error(digest.unsignable)
      record[kind === 'lite-evm' ? 'liteEvmSignature' : 'evmSignature'] = evmSignature(digest.digest)
    }
    records.push(record)
  }
  return records
}
