/**
 * `price-store/engine`: the pure query engine, for hosts that answer
 * `GET /prices` queries over data of their own. Give it a {@link ScanSource}
 * (rows of a symbol in timestamp order) and it parses, plans, prices and
 * answers every form the store answers, with no I/O of its own. A store's
 * `run(plan)` and `ask(plan)` take the plans made here.
 * @packageDocumentation
 */
export { parseQuery } from './engine/parse-query.js'
export type { QueryConfig, ProviderNames } from './engine/parse-query.js'
export { planQuery } from './engine/plan.js'
export type { QueryPlan } from './engine/query-plan.js'
export { executeQuery, executePlan, streamBuckets } from './engine/execute.js'
export { costOf } from './engine/cost.js'
export type { DataCounts } from './engine/data-counts.js'
export { formOf } from './engine/answer-form.js'
export type { AnswerForm } from './types.js'
export { sampleByInterval } from './engine/kernels/sample.js'
export type { ScanSource, ScanRow, ScanOptions } from './engine/scan-source.js'
export { scopedSource } from './engine/read-scope.js'
export type { ReadScope } from './engine/read-scope.js'
