import { parseArgs, type ParseArgsConfig } from 'node:util'

type Options = NonNullable<ParseArgsConfig['options']>

/**
 * Says in the CLI's own words what is wrong with `argv`, once `parseArgs`
 * in strict mode has refused it. Node's own messages name its API ("To
 * specify a positional argument starting with a '-'...") rather than the
 * command, so the arguments are read again, leniently, to find the culprit.
 * Falls back to Node's message when it cannot tell.
 */
export function explainArgError(argv: readonly string[], options: Options, allowPositionals: boolean, err: unknown): string {
  const fallback = err instanceof Error ? err.message : String(err)
  const { tokens } = parseArgs({ args: [...argv], options, allowPositionals: true, strict: false, tokens: true })
  for (const token of tokens) {
    if (token.kind === 'positional') {
      if (!allowPositionals) return `unexpected argument ${JSON.stringify(token.value)} (this command takes options only)`
      continue
    }
    if (token.kind !== 'option') continue
    const option = options[token.name]
    if (option === undefined) return unknownOption(token.rawName, options)
    const flag = `--${token.name}`
    if (option.type === 'boolean' && token.value !== undefined) return `option ${flag} takes no value`
    if (option.type === 'string' && token.value === undefined) return `option ${flag} needs a value`
    if (option.type === 'string' && token.inlineValue === false && token.value?.startsWith('-') === true) {
      // Strict mode refuses "--port --host": the value looks like an option, so it probably is one.
      return `option ${flag} needs a value (got the option ${token.value}; write ${flag}=VALUE for a value that starts with "-")`
    }
  }
  return fallback
}

/** `unknown option --prot (did you mean --port?)`: a near miss of a known option is named. */
function unknownOption(rawName: string, options: Options): string {
  const near = nearMiss(rawName.replace(/^--?/, ''), Object.keys(options).filter((name) => name.length > 1))
  return near === undefined ? `unknown option ${rawName}` : `unknown option ${rawName} (did you mean --${near}?)`
}

/**
 * The known name `given` is a likely typo of: the nearest one within 2 edits and half its length (a swap of
 * two neighbouring letters is one edit), or `undefined` when none is that near or two are nearest.
 */
export function nearMiss(given: string, names: readonly string[]): string | undefined {
  const near = names
    .map((name) => ({ name, distance: editDistance(given, name) }))
    .filter(({ name, distance }) => distance <= Math.min(2, name.length >> 1))
  const nearest = Math.min(...near.map(({ distance }) => distance))
  const best = near.filter(({ distance }) => distance === nearest)
  return best.length === 1 ? best[0]?.name : undefined
}

/**
 * Edit distance with adjacent transpositions (optimal string alignment): "sevre" is one edit from "serve".
 * Names are short, so the plain table is enough.
 */
export function editDistance(a: string, b: string): number {
  const rows: number[][] = [Array.from({ length: b.length + 1 }, (_, j) => j)]
  for (let i = 1; i <= a.length; i++) {
    const row = [i]
    for (let j = 1; j <= b.length; j++) {
      const up = rows[i - 1] as number[]
      let best = Math.min((up[j] as number) + 1, (row[j - 1] as number) + 1, (up[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1))
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, (rows[i - 2] as number[])[j - 2] as number + 1)
      row[j] = best
    }
    rows.push(row)
  }
  return (rows[a.length] as number[])[b.length] as number
}
