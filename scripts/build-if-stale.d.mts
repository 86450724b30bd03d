/** Types of build-if-stale.mjs, for its test. */
export declare const BUILD_INPUTS: readonly string[]
export declare const STAMP: string
export declare function staleReason(builtAt: number | undefined, inputs: ReadonlyArray<{ path: string; mtimeMs: number }>): string | undefined
