/**
 * What the standalone benches (batch-asof, cross-rate, cursor-paging: each
 * builds its own data, outside run.ts's families) share: their flags and
 * the median of timed rounds.
 */

/** The value of `--name` on the command line, or `fallback`. */
export function textArg(name: string, fallback: string): string {
  const at = process.argv.indexOf(`--${name}`)
  return at < 0 ? fallback : (process.argv[at + 1] ?? fallback)
}

/** The number given as `--name` on the command line, or `fallback`. @throws Error when it is not a number */
export function numberArg(name: string, fallback: number): number {
  const value = Number(textArg(name, String(fallback)))
  if (!Number.isFinite(value)) throw new Error(`--${name} must be a number`)
  return value
}

/** The median time of `rounds` calls of `fn`, one after another (ms). */
export async function medianMs(fn: () => unknown, rounds: number): Promise<number> {
  const runs: number[] = []
  for (let i = 0; i < rounds; i++) {
    const t0 = process.hrtime.bigint()
    await fn()
    runs.push(Number(process.hrtime.bigint() - t0) / 1e6)
  }
  return runs.sort((x, y) => x - y)[Math.floor(rounds / 2)]!
}
