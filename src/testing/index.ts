/**
 * price-store/testing: the fast-check arbitraries and the naive reference
 * model this project's property tests use, for hosts to property-test their
 * own integration (a proxy, a cache, a server of their own) and their own
 * interval sampling against the same model. See docs/testing.md.
 *
 * Needs `fast-check` 4 (an optional peer dependency of the package). Kept
 * out of the main entry, so a program that does not import it never loads
 * fast-check.
 * @packageDocumentation
 */

// Records: the provider they are written for, and deterministic ones by hand.
export { TEST_PROVIDER, T0, makeRecord } from './records.js'
export type { InputRecord } from './records.js'

// Arbitraries of records and data sets (valid and invalid).
export {
  TEST_LIMITS, MAX_SAFE, INDEXED_INTERVALS, TRICKY_SYMBOLS, INVALID_SYMBOLS, TRICKY_IDS,
  rarely, symbolArb, idArb, dataIntervalArb, timestampArb, sourceArb, valueArb, inputRecordArb, dataSetArb, splitBatches, badRecordArb,
} from './record-arbitraries.js'
export type { DataSet, BadRecord } from './record-arbitraries.js'

// Arbitraries of GET /prices parameters, and of typed store calls.
export {
  paramContextArb, rawEntriesArb, renderParamsArb, rawParamsArb, rangeParamsArb, queryParamsArb, showParams,
} from './query-arbitraries.js'
export type { ParamContext } from './query-arbitraries.js'
export { typedCallArb, typedCallParams } from './typed-call-arbitraries.js'
export type { TypedCall } from './typed-call-arbitraries.js'

// The reference model.
export {
  referenceQuery, referencePrune, referenceFaultParameters, storedRecords, toReturned, outcomeOf, keyOrder,
  compareRecords, compareUtf8, isValidSymbol, NearNumber, ModelTooBig,
} from './reference-model.js'
export type { ModelConfig, ModelResult, ModelPruneResult } from './reference-model.js'

// The reference model of the feed-quality report (store.quality()).
export { referenceQuality } from './reference-forms/quality.js'
export type { ReferenceQualityOptions } from './reference-forms/quality.js'
export { referenceBatchAsOf } from './reference-forms/batch-asof.js'
export { referenceValidUntil } from './reference-forms/valid-until.js'
export type { ReferenceBatchEntry } from './reference-forms/batch-asof.js'
export { referenceCross, referenceLatestCross } from './reference-forms/cross.js'
export type { ReferenceCross } from './reference-forms/cross.js'
export { referencePage, referencePages } from './reference-forms/page.js'
export type { ReferencePage, ReferencePageGrid, ReferencePosition } from './reference-forms/page.js'

// Arbitraries of `fields` selections (docs/semantics.md, "Field selection").
export { SELECTABLE_FIELDS, INVALID_FIELDS, fieldsValueArb, withFieldsArb } from './field-arbitraries.js'
