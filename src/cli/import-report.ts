import type { BatchWriter, ImportCounts } from './batch-writer.js'
import { describeSpan } from './batch-writer.js'
import { countOf, formatCount } from './progress.js'

/**
 * The one-line summary of a finished import: the records now stored (not
 * the lines read), then what was read besides them, when anything was.
 */
export function importSummary(counts: ImportCounts, files: number, seconds: number, rate: string, location: string): string {
  const { stored, read, skipped, repeated } = counts
  const others = [
    skipped === 0 ? undefined : `${countOf(skipped, 'bad record')} skipped`,
    repeated === 0 ? undefined : `${formatCount(repeated)} repeated a record of the same batch`,
  ].filter((part) => part !== undefined)
  const besides = others.length === 0 ? '' : ` (${formatCount(read)} read: ${others.join(', ')})`
  return `imported ${records(stored)} from ${countOf(files, 'file')} in ${seconds.toFixed(1)} s (${rate}) into ${location}${besides}`
}

/**
 * What an import stopped by a signal leaves: what is stored, what was read
 * and not written (batches are atomic, so all of a batch or none of it),
 * and how to go on.
 */
export function interruptReport(signal: string, importer: BatchWriter, location: string): string {
  const { stored } = importer.counts
  const last = importer.lastWritten
  const pending = importer.pending
  const upTo = last === undefined ? '' : `, up to ${last.file} line ${last.line}`
  const dropped =
    pending.first === undefined || pending.last === undefined
      ? ''
      : ` The ${records(pending.count)} read after them (${describeSpan(pending.first, pending.last)}) ${pending.count === 1 ? 'was' : 'were'} not written.`
  const resumeAt = pending.first ?? (last === undefined ? undefined : { file: last.file, line: last.line + 1 })
  const tail =
    resumeAt === undefined || resumeAt.file === '<stdin>'
      ? ''
      : ` For NDJSON, "tail -n +${resumeAt.line} ${resumeAt.file}" gives the lines from the first one not stored.`
  return (
    `interrupted by ${signal}: ${records(stored)} stored in ${location}${upTo}.${dropped}\n` +
    `To finish, run the same import again: records already stored are replaced, not duplicated.${tail}`
  )
}

function records(n: number): string {
  return countOf(n, 'record')
}
