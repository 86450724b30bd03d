import { PriceStoreError, isPriceStoreError } from '../../errors.js'

/**
 * Turns whatever a Level database threw into a coded error, keeping the
 * original as `cause`. Errors that are already coded pass through.
 */
export function toStorageError(err: unknown, action: string): PriceStoreError {
  if (isPriceStoreError(err)) return err as PriceStoreError
  const codes = levelCodes(err)
  if (codes.has('LEVEL_LOCKED')) {
    return new PriceStoreError('PRICE_LOCKED', `cannot ${action}: the database is in use by another process or store`, { cause: err })
  }
  if (codes.has('LEVEL_DATABASE_NOT_OPEN') || codes.has('LEVEL_ITERATOR_NOT_OPEN') || codes.has('LEVEL_SNAPSHOT_NOT_OPEN')) {
    return new PriceStoreError('PRICE_NOT_OPEN', `cannot ${action}: the store is not open`, { cause: err })
  }
  const reason = err instanceof Error ? err.message : String(err)
  return new PriceStoreError('PRICE_STORAGE_ERROR', `cannot ${action}: ${reason}`, { cause: err })
}

/** The codes on an error and its chain of causes (Level nests the real reason, e.g. LEVEL_LOCKED). */
function levelCodes(err: unknown): Set<string> {
  const codes = new Set<string>()
  for (let current = err, depth = 0; typeof current === 'object' && current !== null && depth < 5; depth++) {
    const code = (current as { code?: unknown }).code
    if (typeof code === 'string') codes.add(code)
    current = (current as { cause?: unknown }).cause
  }
  return codes
}
