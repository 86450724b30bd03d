/**
 * Journal entries: the keys of the records one batch wrote, in batch order,
 * and the replication log's id of the commit when it has one, stored under
 * the batch's commit position in the same atomic write as the records. Only
 * keys are kept (the records live in the log and chunks), so the journal
 * costs a few dozen bytes a record.
 *
 * `version (1) · end (u64 BE) · commit id · symbol count (varint) · symbol* · (symbol index (varint) · timestamp (u64 BE) · id)*`
 *
 * where the commit id, each symbol and each record id is a varint length and
 * its UTF-8 bytes (a commit id of length 0: the commit has none), and `end`
 * counts the bytes of every journal entry written so far, this one included:
 * the first and last entries then tell how many bytes the journal holds
 * without reading the entries between them. The commit id lets a position
 * be checked to name the same commit (`watch({ after: 'P.tag' })`), not
 * merely the same number.
 */
import { ByteReader, ByteWriter, MalformedBytes, readUint64, writeUint64 } from './bytes.js'
import { VALUE_VERSION, readFormatVersion } from './format-version.js'

/** Where `end` sits in an entry. */
const END_OFFSET = 1

/** The key of one record, as a journal entry lists it. */
export interface JournalRecord {
  readonly symbol: string
  readonly timestamp: number
  readonly id: string
}

/**
 * Packs the keys of one batch's records, in the batch's order, and its commit id.
 * @param commitId the replication log's id of the commit (none when `undefined`)
 * @param endBefore the `end` of the entry written before this one (0 for the first); a batch encoded before its
 *   place in the journal is known gets it later from {@link setJournalEnd}
 */
export function encodeJournalEntry(records: readonly JournalRecord[], commitId?: string, endBefore = 0): Buffer {
  const symbols = new Map<string, number>()
  for (const record of records) if (!symbols.has(record.symbol)) symbols.set(record.symbol, symbols.size)
  const writer = new ByteWriter(64 + (commitId?.length ?? 0) * 3 + records.length * 48).byte(VALUE_VERSION).uint64(0).text(commitId ?? '').varint(symbols.size)
  for (const symbol of symbols.keys()) writer.text(symbol)
  for (const record of records) writer.varint(symbols.get(record.symbol) as number).uint64(record.timestamp).text(record.id)
  return setJournalEnd(writer.finish(), endBefore)
}

/** Writes an entry's `end` in place, given the `end` of the entry before it; returns the entry. */
export function setJournalEnd(entry: Buffer, endBefore: number): Buffer {
  writeUint64(entry, END_OFFSET, endBefore + entry.length)
  return entry
}

/**
 * The `end` of an entry: the bytes of every journal entry up to it.
 * @throws MalformedBytes when the entry is too short or of another version
 */
export function readJournalEnd(bytes: Uint8Array): number {
  const reader = new ByteReader(bytes)
  readFormatVersion(reader)
  return readUint64(bytes, reader.skip(8))
}

/**
 * The record keys an entry lists, in batch order (a key written twice in
 * one batch is listed twice).
 * @throws MalformedBytes when the entry does not parse
 */
export function readJournalEntry(bytes: Uint8Array): JournalRecord[] {
  const reader = new ByteReader(bytes)
  readFormatVersion(reader)
  reader.skip(8)
  reader.sized()
  const symbols: string[] = []
  for (let count = reader.varint(); symbols.length < count;) symbols.push(reader.text())
  const records: JournalRecord[] = []
  while (!reader.done) {
    const index = reader.varint()
    const symbol = symbols[index]
    if (symbol === undefined) throw new MalformedBytes(`symbol index ${index} of ${symbols.length}`)
    records.push({ symbol, timestamp: reader.uint64(), id: reader.text() })
  }
  return records
}

/**
 * The replication log's id of an entry's commit, or `undefined` when it has none.
 * @throws MalformedBytes when the entry does not start as one
 */
export function readJournalCommitId(bytes: Uint8Array): string | undefined {
  const reader = new ByteReader(bytes)
  readFormatVersion(reader)
  reader.skip(8)
  const id = reader.text()
  return id === '' ? undefined : id
}
