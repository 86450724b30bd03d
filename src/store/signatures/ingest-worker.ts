/**
 * The worker thread a store verifies its batches' signatures in: a
 * SignatureVerifier worker (trust/worker/serve-requests.ts) that also reads
 * the store's encoded chunks (ingest-chunk.ts). Built as
 * dist/ingest-worker.js (tsup.config.ts); from sources the verifier bundles
 * it on first use (trust/worker-script.ts).
 */
import { serveRequests } from '../../trust/worker/serve-requests.js'
import { readIngestChunk, type IngestChunkContext } from './ingest-chunk.js'

serveRequests((encoded, context) => readIngestChunk(encoded, context as IngestChunkContext))
