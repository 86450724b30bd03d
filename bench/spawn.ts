/** Runs bench tasks in child processes (see worker.ts), with the same loader flags (tsx) as this process. */
import { fork } from 'node:child_process'
import type { ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const WORKER = fileURLToPath(new URL('./worker.ts', import.meta.url))

/** Starts `worker.ts <task>`; its stdout goes to this process's stderr, so stdout stays the report. */
export function forkWorker(task: string, input: unknown): ChildProcess {
  return fork(WORKER, [task, JSON.stringify(input)], {
    execArgv: [...process.execArgv.filter((arg) => !arg.startsWith('--max-old-space-size')), '--max-old-space-size=8192'],
    stdio: ['ignore', 2, 2, 'ipc'],
  })
}

/** Runs one task to completion and resolves with the result it sends back. */
export function runChild<T>(task: string, input: unknown): Promise<T> {
  return new Promise((resolve, reject) => {
    const child = forkWorker(task, input)
    let result: { value: T } | undefined
    child.once('message', (message) => (result = { value: message as T }))
    child.once('error', reject)
    child.once('exit', (code, signal) => {
      if (result !== undefined) resolve(result.value)
      else reject(new Error(`bench task ${task} exited with ${signal ?? `code ${code}`} before reporting`))
    })
  })
}
