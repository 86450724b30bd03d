/**
 * The table of scripts/cluster-soak.mjs (bench/results/cluster-soak.md): one row per scenario, each naming
 * the soak it comes from, the soaks listed below it, and the failed runs of each. A soak of some scenario
 * files replaces their rows and keeps the others' rows as they were, with the soaks that produced them:
 * {@link mergeSoak} reads the existing text, {@link renderSoakTable} writes the merged one.
 */

const HEADER = '| scenario | runs | acknowledged batches | lost records (worst) | phantom records (worst) | nodes diverged (worst) | nodes left stopped (worst) | recovery ms (median / worst) | soak |'
const ALIGN = '|---|--:|--:|--:|--:|--:|--:|--:|---|'
/** The header line of the table before rows named their soak (one soak, named in the text above the table). */
const LEGACY_SOAK = /^`node scripts\/cluster-soak\.mjs[^`]*`, (\S+):/

/**
 * One soak: `id` (its start time, ISO), what it ran and on what (`description`, one line), and the runs that
 * failed (`failures`: `{ run, output }`).
 * @typedef {{ id: string, description: string, failures: { run: number, output: string }[] }} Soak
 */
/**
 * One scenario's row: its cells after the scenario's name (as text), and the soak it comes from.
 * @typedef {{ scenario: string, cells: string[], soak: string }} Row
 */

/**
 * The rows of a soak's ledger (one JSON line per run of a scenario, test/cluster/support/soak-ledger.ts), a row
 * per scenario: the runs, the acknowledged batches (summed), the worst counts, the recovery time (median and
 * worst of the runs that took a write again; `none` when none did).
 * @returns {Row[]}
 */
export function rowsOfLedger(lines, soak) {
  const byScenario = new Map()
  for (const line of lines) byScenario.set(line.scenario, [...byScenario.get(line.scenario) ?? [], line])
  const median = (numbers) => [...numbers].sort((a, b) => a - b)[Math.floor((numbers.length - 1) / 2)]
  return [...byScenario].map(([scenario, list]) => {
    const worst = (key) => String(Math.max(...list.map((row) => row[key])))
    const recovery = list.map((row) => row.recoveryMs).filter((ms) => ms >= 0)
    const taken = recovery.length === 0 ? 'none' : `${median(recovery)} / ${Math.max(...recovery)}${recovery.length < list.length ? ` (${list.length - recovery.length} runs: none)` : ''}`
    return { scenario, cells: [String(list.length), String(list.reduce((sum, row) => sum + row.acknowledged, 0)), worst('lost'), worst('phantom'), worst('diverged'), worst('stopped'), taken], soak }
  })
}

/** The soaks and rows of an existing table's text (either form); empty when there is none. */
export function readSoakTable(text) {
  const soaks = new Map()
  const rows = []
  let legacy
  /** A failed run whose heading was read: its output is the fenced block that follows. */
  let failure
  let inFence = false
  for (const line of text.split('\n')) {
    if (failure !== undefined) {
      if (!inFence) inFence = line === '```'
      else if (line !== '```') failure.output.push(line)
      else {
        failure.soak.failures.push({ run: failure.run, output: failure.output.join('\n') })
        failure = undefined
        inFence = false
      }
      continue
    }
    const legacyHeader = LEGACY_SOAK.exec(line)
    const failed = /^### (.+) :: run (\d+)$/.exec(line) ?? /^Run (\d+) failed:$/.exec(line)
    if (legacyHeader !== null) {
      legacy = { id: legacyHeader[1], description: line, failures: [] }
      soaks.set(legacy.id, legacy)
    } else if (legacy !== undefined && line.startsWith('Runs of ')) legacy.description += ` ${line}`
    else if (line.startsWith('- ') && line.includes(' :: ')) {
      const [id, description] = line.slice(2).split(' :: ')
      soaks.set(id, { id, description, failures: [] })
    } else if (failed !== null) {
      const soak = failed.length === 3 ? soaks.get(failed[1]) : legacy
      if (soak !== undefined) failure = { soak, run: Number(failed.at(-1)), output: [] }
    } else if (line.startsWith('| ') && line !== HEADER && !line.startsWith('| scenario |')) {
      const cells = line.slice(2, -2).split(' | ')
      const soak = cells.length === 9 ? cells.pop() : legacy?.id
      rows.push({ scenario: cells[0], cells: cells.slice(1), soak })
    }
  }
  return { soaks, rows }
}

/**
 * The table after `soak`: its rows, then the rows of the existing table whose scenario it did not run, with
 * only the soaks those rows still come from.
 */
export function mergeSoak(existingText, soak, rows) {
  const before = readSoakTable(existingText)
  const ran = new Set(rows.map((row) => row.scenario))
  const kept = before.rows.filter((row) => !ran.has(row.scenario))
  const soaks = [soak, ...[...before.soaks.values()].filter((old) => old.id !== soak.id && kept.some((row) => row.soak === old.id))]
  return renderSoakTable(soaks, [...rows, ...kept])
}

export function renderSoakTable(soaks, rows) {
  const out = [
    '# Cluster soak',
    '',
    'What the fault scenarios\' checker found over many runs (`node scripts/cluster-soak.mjs`). Each row names the soak it comes from; a soak of some scenario files keeps the other rows as they were.',
    '',
    HEADER,
    ALIGN,
    ...rows.map((row) => `| ${row.scenario} | ${row.cells.join(' | ')} | ${row.soak} |`),
    '',
    '## Soaks',
    '',
    ...soaks.map((soak) => `- ${soak.id} :: ${soak.description}`),
  ]
  const failures = soaks.flatMap((soak) => soak.failures.map((failure) => ({ soak, failure })))
  if (failures.length > 0) out.push('', '## Failed runs')
  for (const { soak, failure } of failures) out.push('', `### ${soak.id} :: run ${failure.run}`, '```', failure.output, '```')
  return out.join('\n') + '\n'
}
