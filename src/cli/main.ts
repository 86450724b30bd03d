#!/usr/bin/env node
// The `price-store` bin. Everything testable lives in run-cli.ts; this file only binds the real process.
import { processIo } from './io.js'
import { runCli } from './run-cli.js'

runCli(process.argv.slice(2), processIo()).then(
  (code) => {
    process.exitCode = code
  },
  (err: unknown) => {
    process.stderr.write(`price-store: unexpected failure: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`)
    process.exitCode = 1
  },
)
