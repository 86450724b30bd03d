/**
 * A worker of signatures.bench.ts: verifyRecord in a tight loop over its
 * records for a fixed time, no cache (every call does the cryptography),
 * then posts how many it verified. One per core, started by the bench.
 */
import { parentPort, workerData } from 'node:worker_threads'
import { signerTable } from '../src/trust/allowed-signers.js'
import { verifyRecord } from '../src/trust/verify-record.js'
import type { LoopTask } from './signatures-records.js'

const task = workerData as LoopTask
const table = signerTable(task.signers)
const records = JSON.parse(task.records) as Record<string, unknown>[]
const options = { secp256k1: task.backend }
// Warm up (key parsing, JIT) before the clock starts.
for (let i = 0; i < Math.min(50, records.length); i++) verifyRecord(records[i] as Record<string, unknown>, table, options)
let count = 0
let failures = 0
const start = performance.now()
const end = start + task.seconds * 1000
while (performance.now() < end) {
  for (let i = 0; i < 20; i++) {
    const verdict = verifyRecord(records[(count + task.offset) % records.length] as Record<string, unknown>, table, options)
    if (verdict.overall !== 'valid') failures++
    count++
  }
}
parentPort?.postMessage({ count, failures, ms: performance.now() - start })
