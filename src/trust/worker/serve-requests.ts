/**
 * The loop of a SignatureVerifier worker thread: verifies the chunks of
 * records it claims first with verifyRecord (every worker is sent every
 * chunk, so a worker that a busy core slows takes fewer), keeping a bounded
 * cache of outcomes: the ones it computes, and the ones the others computed
 * (the pool passes them on), so a signature met again is a hit on any
 * worker. The signed messages are built here, not in the calling thread;
 * records come and verdicts go in worker-protocol.ts's compact forms.
 */
import { parentPort, workerData } from 'node:worker_threads'
import { signerTable } from '../allowed-signers.js'
import { VerificationCache } from '../verification-cache.js'
import { verifyRecord } from '../verify-record.js'
import { claimChunk, decodeRecords, encodeVerdicts, type VerifyReply, type VerifyRequest, type WorkerRequest, type WorkerSetup } from '../worker-protocol.js'

/** Reads the records of an {@link EncodedChunk} (`context`: the setup's, from the caller that starts the workers). */
export type ChunkDecoder = (encoded: Uint8Array, context: unknown) => readonly Readonly<Record<string, unknown>>[]

/**
 * Answers the requests this worker thread is sent, until it is ended.
 * @param decode how the records of an encoded chunk are read; without it, such a chunk is answered with an error
 */
export function serveRequests(decode?: ChunkDecoder): void {
  const setup = workerData as WorkerSetup
  const table = signerTable(setup.signers)
  const cache = new VerificationCache(setup.cacheSize)
  const options = { evmChainId: setup.evmChainId, secp256k1: setup.secp256k1, cache }
  const port = parentPort
  if (port === null) throw new Error('a SignatureVerifier worker runs as a worker thread')
  const recordsOf = (request: VerifyRequest): readonly Readonly<Record<string, unknown>>[] => {
    if (!('encoded' in request)) return decodeRecords(request)
    if (decode === undefined) throw new Error('this worker does not read encoded chunks')
    return decode(request.encoded, setup.context)
  }

  port.on('message', (request: WorkerRequest) => {
    if ('learned' in request) {
      cache.remember(request.learned)
      return
    }
    if (!claimChunk(request)) return
    let reply: VerifyReply
    try {
      const before = cache.stats()
      const verdicts = recordsOf(request).map((record) => verifyRecord(record, table, options))
      const after = cache.stats()
      reply = { id: request.id, ...encodeVerdicts(verdicts), cacheHits: after.hits - before.hits, cacheMisses: after.misses - before.misses, learned: cache.takeLearned() }
    } catch (error) {
      reply = { id: request.id, error: error instanceof Error ? error.message : String(error) }
    }
    port.postMessage(reply, 'indices' in reply ? [reply.indices.buffer as ArrayBuffer] : [])
  })
}
