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
  const given = rawName.replace(/^--?/, '')
  const near = Object.keys(options).filter((name) => name.length > 1 && editDistance(given, name) <= Math.min(2, name.length >> 1))
  return near.length === 1 ? `unknown option ${rawName} (did you mean --${near[0]}?)` : `unknown option ${rawName}`
}

/** Levenshtein distance: small option names, so the plain table is enough. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min((previous[j] as number) + 1, (current[j - 1] as number) + 1, (previous[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1))
    }
    previous = current
  }
  return previous[b.length] as number
}
