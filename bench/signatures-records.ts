/**
 * Signed records for signatures.bench.ts: distinct records of one symbol
 * series, each signed with one kind as RedStone signs it (the messages are
 * rebuilt by src/trust's own builders, which test/trust checks against
 * RedStone's code; the signing keys are fixed, the RSA one generated).
 */
import { constants, createPrivateKey, generateKeyPairSync, sign, type KeyObject } from 'node:crypto'
import { readFile, rename, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Worker } from 'node:worker_threads'
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

/**
 * `count` distinct records from `first` on, each carrying the signatures of `kinds` (one kind, or several as
 * RedStone's records carried an Arweave and a lite EVM signature), signed by `provider`.
 */
export function signedRecords(provider: BenchProvider, kinds: SignatureKind | readonly SignatureKind[], count: number, first = 0): Record<string, unknown>[] {
  const list = typeof kinds === 'string' ? [kinds] : kinds
  const records: Record<string, unknown>[] = []
  for (let i = first; i < first + count; i++) {
    const record: Record<string, unknown> = {
      id: `bench-${list.join('+')}-${i}`, symbol: 'ETH', provider: provider.id, value: 1800 + (i % 997) / 13, permawebTx: 'mock-permaweb-tx', version: '0.4',
      source: { binance: 1800.1, coinbasepro: 1800.2, kraken: 1799.9 }, timestamp: 1_685_099_220_000 + i * 1000,
    }
    // Each signature covers only the record's own fields, never another signature: the order of signing is free.
    for (const kind of list) {
      if (kind === 'arweave') {
        const bytes = sign('sha256', Buffer.from(arweaveSignedText(record)), { key: provider.privateKey, padding: constants.RSA_PKCS1_PSS_PADDING })
        record['signature'] = bytes.toString('base64')
      } else {
        const digest = kind === 'lite-evm' ? liteDigest(record) : typedDigest(record, 1)
        if (!('digest' in digest)) throw new Error(digest.unsignable)
        record[kind === 'lite-evm' ? 'liteEvmSignature' : 'evmSignature'] = evmSignature(digest.digest)
      }
    }
    records.push(record)
  }
  return records
}

/**
 * `count` distinct records signed with `kinds` and their provider, kept in the system's temporary directory after
 * the first run (an Arweave signature costs about 4 ms a record: two minutes for 30,000), with the provider's
 * private key, so benches can be rerun and interleaved quickly. The records are the same as {@link signedRecords}
 * makes.
 */
export async function cachedSignedRecords(
  count: number, kinds: readonly SignatureKind[] = ['arweave'],
): Promise<{ provider: BenchProvider; records: Record<string, unknown>[] }> {
  const file = join(tmpdir(), `price-store-bench-${kinds.join('+')}-${count}.json`)
  try {
    const saved = JSON.parse(await readFile(file, 'utf8')) as { privateKey: string; provider: Omit<BenchProvider, 'privateKey'>; records: Record<string, unknown>[] }
    return { provider: { ...saved.provider, privateKey: createPrivateKey(saved.privateKey) }, records: saved.records }
  } catch {
    const provider = benchProvider()
    const records = signedRecords(provider, kinds, count)
    const { privateKey, ...rest } = provider
    const partial = `${file}.${process.pid}`
    await writeFile(partial, JSON.stringify({ privateKey: privateKey.export({ format: 'pem', type: 'pkcs8' }), provider: rest, records }))
    await rename(partial, file)
    return { provider, records }
  }
}

const TSX_API = import.meta.resolve('tsx/esm/api')
const LOOP = new URL('./signatures-loop.ts', import.meta.url).href

/** Tight-loop verifications per second on `threads` worker threads (signatures-loop.ts), and the process's CPU µs per verification meanwhile. */
export async function tightLoopRate(task: Omit<LoopTask, 'offset'>, threads: number): Promise<{ rate: number; cpuPerRecord: number }> {
  const cpu = process.cpuUsage()
  const results = await Promise.all(
    Array.from({ length: threads }, (_, offset) => {
      // Node 20 does not pass --import loaders to a worker's own entry: the worker registers tsx, then loads the loop.
      const code = `import(${JSON.stringify(TSX_API)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(LOOP)}) })`
      const worker = new Worker(code, { eval: true, workerData: { ...task, offset: offset * 997 } })
      return new Promise<{ count: number; failures: number; ms: number }>((resolve, reject) => {
        worker.once('message', resolve)
        worker.once('error', reject)
      }).finally(() => void worker.terminate())
    }),
  )
  const used = process.cpuUsage(cpu)
  if (results.some((r) => r.failures > 0)) throw new Error('a tight-loop verification failed: the bench records are wrong')
  const count = results.reduce((sum, r) => sum + r.count, 0)
  return { rate: results.reduce((sum, r) => sum + (r.count / r.ms) * 1000, 0), cpuPerRecord: (used.user + used.system) / count }
}
