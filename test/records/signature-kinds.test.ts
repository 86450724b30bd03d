/**
 * Which signatures make a record acceptable (validateRecord): an Arweave
 * `signature`, or without one a `liteEvmSignature` or `evmSignature` written
 * as an EVM signature (`0x` and 130 hex digits), as RedStone's API served
 * records after it stopped Arweave-signing. A record without `signature` is
 * kept with an empty signature slot and no `signature` is invented for it;
 * a record with none of the three is refused, naming `signature`.
 */
import { describe, expect, it } from 'vitest'
import { validateRecord } from '../../src/records/validate-record.js'
import { TEST_PROVIDER as PROVIDER } from '../../src/testing/records.js'
import { throwsCode } from '../support/assertions.js'
import { rec, without } from '../support/records.js'

// A well-formed EVM signature (whether it holds is the verifier's call, not validation's).
const EVM = `0x${'ab'.repeat(32)}${'1c'.repeat(32)}1b`
const noArweave = (fields: Record<string, unknown>): Record<string, unknown> => ({ ...without(rec(), 'signature'), ...fields })

describe('validateRecord: signature kinds', () => {
  it.each([
    ['a liteEvmSignature', { liteEvmSignature: EVM }],
    ['an evmSignature', { evmSignature: EVM }],
    ['both EVM kinds', { liteEvmSignature: EVM, evmSignature: EVM.toUpperCase().replace('0X', '0x') }],
    ['an empty signature beside a liteEvmSignature', { signature: '', liteEvmSignature: EVM }],
  ])('accepts a record with no Arweave signature and %s, keeping the EVM ones as extras', (_name, fields) => {
    const stored = validateRecord(noArweave(fields), 0, PROVIDER)
    expect(stored.signature).toBe('')
    const extras = Object.fromEntries(Object.entries(fields).filter(([field]) => field !== 'signature'))
    expect(stored.extras).toEqual(extras)
  })

  it('keeps an Arweave signature as before, beside any EVM field, well-formed or not', () => {
    expect(validateRecord(rec({ signature: 'c2ln', liteEvmSignature: 'x' }), 0, PROVIDER)).toMatchObject({ signature: 'c2ln', extras: { liteEvmSignature: 'x' } })
  })

  it.each<[string, Record<string, unknown>, string]>([
    ['no signature field at all', {}, 'missing'],
    ['an empty signature alone', { signature: '' }, 'empty'],
    ['a liteEvmSignature that is not 0x and 130 hex digits', { liteEvmSignature: EVM.slice(0, -1) }, 'missing'],
    ['an evmSignature that is not hex', { evmSignature: `0x${'zz'.repeat(65)}` }, 'missing'],
    ['an EVM signature that is not a string', { liteEvmSignature: 5, evmSignature: null }, 'missing'],
    ['an empty liteEvmSignature', { liteEvmSignature: '' }, 'missing'],
  ])('refuses a record with %s, naming signature', (_name, fields, how) => {
    const err = throwsCode(() => validateRecord(noArweave(fields), 3, PROVIDER), 'PRICE_INVALID_RECORD')
    expect(err.details).toEqual({ index: 3, field: 'signature' })
    expect(err.message).toMatch(new RegExp(`^record 3: signature is ${how}, and the record carries no liteEvmSignature or evmSignature \\(0x and 130 hex digits\\) either`))
  })

  it.each<[string, unknown]>([['a number', 5], ['null', null], ['an array', ['sig']]])(
    'refuses a signature that is %s even beside an EVM signature',
    (_name, signature) => {
      const err = throwsCode(() => validateRecord(noArweave({ signature, liteEvmSignature: EVM }), 0, PROVIDER), 'PRICE_INVALID_RECORD')
      expect(err.details).toEqual({ index: 0, field: 'signature' })
      expect(err.message).toContain('signature must be a string when present')
    },
  )
})
