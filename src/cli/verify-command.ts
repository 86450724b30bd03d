import type { AlteredRecord, ReportedRecord, VerifyReport } from '../store/services/verify-report.js'
import { UsageError, parseCommandArgs } from './args.js'
import { STORE_OPTIONS, STORE_OPTIONS_HELP, resolveStoreConfig } from './config.js'
import type { CliIo } from './io.js'
import { openStore } from './open-store.js'
import { formatCount } from './progress.js'
import { SELECTION_OPTIONS, SELECTION_OPTIONS_HELP, selectionOf } from './selection-flags.js'
import { SIGNATURE_OPTIONS, SIGNATURE_OPTIONS_HELP, withSignatureFlags } from './signature-flags.js'

const HELP = `Usage: price-store verify [options]

Reports on the signatures of the stored records (of the symbols asked for,
within the time window), from one consistent snapshot: how many records
carry each verdict kept when they were written (with --signatures flag or
reject; "unchecked" when verification was off), and the failing ones. With
--recheck, every record is verified again from what the store returns, on
every core: a record that passed when written and fails now was altered by
the store, which is reported loudly ("ALTERED") and must never happen.

Exits 0 when no record fails, 1 when one does (or was altered).

Options:
${SELECTION_OPTIONS_HELP}
  --recheck                   verify every record again from its stored bytes
  --limit N                   list at most N failing records (default 100, at most 10000); the counts
                              always cover every record
  --json                      print the report as JSON (the object store.verify() returns)
${SIGNATURE_OPTIONS_HELP}
${STORE_OPTIONS_HELP}
`

/** `price-store verify`: the signature report of a selection. */
export async function verifyCommand(argv: readonly string[], io: CliIo): Promise<number> {
  const { values } = parseCommandArgs(argv, {
    ...STORE_OPTIONS, ...SELECTION_OPTIONS, ...SIGNATURE_OPTIONS, recheck: { type: 'boolean' }, limit: { type: 'string' }, json: { type: 'boolean' },
  }, false)
  if (values.help === true) {
    io.stdout.write(HELP)
    return 0
  }
  const selection = selectionOf(values)
  const limit = values.limit === undefined ? undefined : Number(values.limit)
  if (limit !== undefined && !(Number.isSafeInteger(limit) && limit >= 0 && limit <= 10_000)) {
    throw new UsageError(`--limit must be a whole number from 0 to 10000 (got ${JSON.stringify(values.limit)})`)
  }
  const config = withSignatureFlags(await resolveStoreConfig(values), values)
  const store = await openStore(config, { mustExist: true, whileServed: 'ask it over HTTP: GET /prices/verify answers the same report' })
  try {
    const report = await store.verify({ ...selection, recheck: values.recheck === true, ...(limit === undefined ? {} : { limit }) })
    io.stdout.write(values.json === true ? `${JSON.stringify(report, null, 2)}\n` : verifyText(config.location, report))
    const failing = report.failing.length + (report.recheck?.failing.length ?? 0) + (report.recheck?.altered.length ?? 0)
    return failing > 0 ? 1 : 0
  } finally {
    await store.close()
  }
}

/** The report for a person: the counts, then the records that fail. */
function verifyText(location: string, report: VerifyReport): string {
  const { stored } = report
  const lines = [
    `price-store verify: ${location} (signatures ${report.policy})`,
    `records     ${formatCount(report.records)}`,
    `as written  ${counts(stored)}, unchecked ${formatCount(stored.unchecked)}`,
  ]
  if (report.recheck !== undefined) lines.push(`rechecked   ${counts(report.recheck.verdicts)}`)
  if (report.recheck !== undefined && report.recheck.altered.length > 0) {
    lines.push('', `ALTERED: ${report.recheck.altered.length} record(s) passed when written and fail now: the store changed them`, ...report.recheck.altered.map(alteredLine))
  }
  if (report.failing.length > 0) lines.push('', 'failing as written:', ...report.failing.map(recordLine))
  if (report.recheck !== undefined && report.recheck.failing.length > 0) lines.push('', 'failing when rechecked:', ...report.recheck.failing.map(recordLine))
  if (report.truncated) lines.push('', `(lists cut at ${report.failing.length} records: --limit N lists more)`)
  return `${lines.join('\n')}\n`
}

function counts(verdicts: Readonly<Record<string, number>>): string {
  return ['valid', 'invalid', 'malformed', 'signer-not-allowed', 'unsigned'].map((verdict) => `${verdict} ${formatCount(verdicts[verdict] ?? 0)}`).join(', ')
}

function recordLine(record: ReportedRecord): string {
  const failing = record.verdict.checks.filter((check) => check.result !== 'valid')
  const why = failing.map((check) => `${check.kind} ${check.result}${check.reason === undefined ? '' : ` (${check.reason})`}`).join('; ')
  return `  ${record.symbol}  ${new Date(record.timestamp).toISOString()}  ${record.id}  ${why || record.verdict.overall}`
}

function alteredLine(record: AlteredRecord): string {
  return `${recordLine(record)}  [was ${record.stored.overall}]`
}
