import { describe, expect, it } from 'vitest'
import { maskSelection, selectionText } from '../../../src/adapters/http/access/reader-request.js'
import { withoutCredentials } from '../../../src/adapters/http/observe/request-observer.js'
import { parseFieldSelection } from '../../../src/rules/fields.js'
import { RECORD_FIELDS } from '../../../src/rules/fields.js'

const sel = (text: string) => parseFieldSelection('fields', text)
/** The fields a selection lets through, from the whole list: the model of what a selection means. */
const through = (selection: ReturnType<typeof sel> | undefined): string[] =>
  selection === undefined ? [] : RECORD_FIELDS.filter((name) => selection.names.includes(name) === (selection.mode === 'keep'))

describe('a reader\'s fields mask over a request\'s own', () => {
  const masks = ['-signature', '-signature,-liteEvmSignature', 'symbol,value,timestamp', 'value']
  const requests = [undefined, '-source', '-value', 'id,signature', 'signature', 'value,timestamp', 'id']
  for (const mask of masks) {
    for (const request of requests) {
      it(`lets through exactly what both let through: mask ${mask}, request ${request ?? '(none)'}`, () => {
        const combined = maskSelection(request === undefined ? undefined : sel(request), sel(mask))
        const expected = through(sel(mask)).filter((name) => request === undefined || through(sel(request)).includes(name))
        expect(through(combined)).toEqual(expected)
        // Nothing left is said as such (the endpoint refuses it), never as an empty selection.
        if (expected.length === 0) expect(combined).toBeUndefined()
        else expect(through(sel(selectionText(combined!)))).toEqual(expected)
      })
    }
  }
})

describe('the access log\'s query string', () => {
  it('writes REDACTED for the value of every credential-like parameter, and nothing else changes', () => {
    expect(withoutCredentials('symbol=BTC&api_key=s3cret&limit=2')).toBe('symbol=BTC&api_key=REDACTED&limit=2')
    expect(withoutCredentials('key=a&apikey=b&x-api-key=c&token=d&access_token=e&Authorization=f')).toBe(
      'key=REDACTED&apikey=REDACTED&x-api-key=REDACTED&token=REDACTED&access_token=REDACTED&Authorization=REDACTED')
    expect(withoutCredentials('monkey=1&keys=2&symbol=KEY')).toBe('monkey=1&keys=2&symbol=KEY')
  })
})
