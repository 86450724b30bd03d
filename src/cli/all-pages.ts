import { isResumeRefusal } from '../engine/cursor.js'
import type { PriceStore } from '../store/price-store.js'
import { toExactJson } from '../rules/exact-json.js'
import { CliError } from './args.js'
import type { CliIo } from './io.js'

/**
 * `price-store query --all-pages` (docs/cli.md): follows the cursors of a
 * list answer through `store.page` from `cursor` (the first page when it
 * is absent or empty) to the last page, and prints every page's items as
 * one JSON array. Without `limit`, pages hold the store's `maxLimit` items
 * (a latest-N query without it would page one record at a time). Each page
 * is read from the store as it is then (docs/semantics.md, "Cursors").
 * The array is written as the pages come, so a long history is never held
 * whole (with `pretty`, each item is indented as `--pretty` indents the answer).
 * @throws PriceStoreError as `store.page`: a form that is not a list, a bad cursor, a bad query
 */
export async function printAllPages(store: PriceStore, params: URLSearchParams, pretty: boolean, io: CliIo): Promise<void> {
  const asked = new URLSearchParams(params)
  if (!asked.has('limit')) asked.set('limit', String(store.limits.maxLimit))
  let cursor = asked.get('cursor') ?? ''
  let written = 0
  for (;;) {
    asked.set('cursor', cursor)
    const page = await store.page(asked)
    for (const item of page.answer as readonly unknown[]) {
      const json = pretty ? toExactJson(item, 2).replace(/\n/g, '\n  ') : toExactJson(item)
      io.stdout.write(`${written === 0 ? '[' : ','}${pretty ? '\n  ' : ''}${json}`)
      written++
    }
    if (page.next === undefined) break
    cursor = page.next
  }
  io.stdout.write(written === 0 ? '[]\n' : `${pretty ? '\n' : ''}]\n`)
}

/**
 * `query cursor=C` without `--all-pages`: the store's refusal (only pages resume), worded for the command line.
 * Any other error as it is.
 */
export function withAllPagesHint(err: unknown): never {
  if (!isResumeRefusal(err)) throw err
  throw new CliError('cursor=C resumes a paged answer: add --all-pages to print every page from C on (cursor= alone, or none, is the first page) [PRICE_INVALID_QUERY]', 2, { cause: err })
}
