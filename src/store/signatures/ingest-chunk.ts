/**
 * How a store's signature workers read a chunk of the batch being written:
 * the chunk is a log entry of the batch's records (keys/framed-records.ts),
 * each decoded as the store will return it, then cut to what was signed.
 * So the verdict is of the bytes the batch writes, as a re-check of the
 * stored records would find it. Runs in the workers (ingest-worker.ts), and
 * on any thread in tests.
 */
import { asBuffer } from '../../keys/bytes.js'
import { readLogEntry } from '../../keys/log-codec.js'
import { decodeValue } from '../../keys/value-codec.js'
import { verificationInput } from '../../trust/worker-protocol.js'
import type { WorkerEntry } from '../../trust/worker-script.js'
import type { Provider } from '../../types.js'

/** The worker a store verifies its batches with (built as dist/ingest-worker.js, tsup.config.ts). */
export const INGEST_WORKER: WorkerEntry = { file: 'ingest-worker.js', source: () => new URL('./ingest-worker.ts', import.meta.url) }

/** What the ingest workers are given to read chunks with: the store's provider. */
export interface IngestChunkContext {
  readonly provider: Pick<Provider, 'id' | 'publicKey'>
}

/**
 * The records of a chunk, each as it was signed: the fields verification reads (extra ones included), without
 * `providerPublicKey` (the workers check the Arweave signature against the provider's configured key, the one a
 * query joins).
 * @throws PriceStoreError `PRICE_CORRUPT_VALUE` or MalformedBytes when the chunk does not decode (it was encoded by
 *   the store a moment before: never, unless the code is wrong)
 */
export function readIngestChunk(encoded: Uint8Array, { provider }: IngestChunkContext): Readonly<Record<string, unknown>>[] {
  const bytes = asBuffer(encoded)
  const full = { name: '', ...provider }
  const records: Readonly<Record<string, unknown>>[] = []
  readLogEntry(bytes, (symbol, timestamp, idStart, idEnd, valueStart, valueEnd) => {
    const id = bytes.toString('utf8', idStart, idEnd)
    const record = decodeValue(bytes, valueStart, valueEnd, { symbol, timestamp, id, entry: 'a batch being verified' }, full)
    // Cut as the verifier cuts a record sent as JSON whose key is the provider's, which the workers hold.
    records.push(verificationInput(record as unknown as Readonly<Record<string, unknown>>, true))
  })
  return records
}
