/** Appending a validated batch to a replication log, as every node writes one. */
import type { StoredRecord } from '../records/stored-record.js'
import type { Provider } from '../types.js'
import { encodeBatch, encodePartsCommit } from './batch-codec.js'
import type { ReplicationLog } from './replication-log.js'

/**
 * Appends a batch: inline in one commit, or as parts and then a commit naming them, every message under an id made
 * from the batch's bytes, so that the log takes a retried append once (within its duplicate window). The commit
 * carries `signatures`, the options the writer verified the batch under, so that every node verifies it the same way.
 * @returns the commit's position
 * @throws PriceStoreError `PRICE_INVALID_RECORD` for a record too large for one message; the log's error when it did
 *   not acknowledge (the batch may or may not be in it: appending it again is safe)
 */
export async function appendBatch(log: ReplicationLog, records: readonly StoredRecord[], provider: Provider, signatures: string): Promise<number> {
  const batch = encodeBatch(records, provider, log.maxMessageBytes)
  if (batch.inline !== undefined) return (await log.appendCommit(batch.inline, batch.id, provider.id, signatures)).position
  // Parts in flight together (their order in the log does not matter: the commit lists their positions).
  const parts = await Promise.all(batch.parts.map(async (part, index) => (await log.appendPart(part, `${batch.id}.${index}`)).position))
  return (await log.appendCommit(encodePartsCommit(parts), batch.id, provider.id, signatures)).position
}
