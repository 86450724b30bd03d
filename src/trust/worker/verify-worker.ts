/**
 * The worker thread of SignatureVerifier (serve-requests.ts), for records
 * sent as JSON. Built as dist/trust-worker.js (tsup.config.ts); from
 * sources the verifier bundles it on first use (worker-script.ts).
 */
import { serveRequests } from './serve-requests.js'

serveRequests()
